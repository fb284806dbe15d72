// Builds the project's one native helper, native/docker-exec (Go, standard library only), into
// dist/native/caravan-docker-exec: the docker driver's fast path for alloc exec into runc
// containers (src/drivers/docker/direct-exec.ts). Without `go` on PATH it is skipped, loudly, and
// the driver execs through the Engine's API instead. Go's build cache makes a rebuild ~0.5 s.
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'native', 'caravan-docker-exec');
const probe = spawnSync('go', ['version'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.log('*** SKIPPED: native/docker-exec (no `go` on PATH): docker exec goes through the Engine API (slower). ***');
  process.exit(0);
}
mkdirSync(dirname(out), { recursive: true });
const r = spawnSync('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', out, '.'], {
  cwd: join(root, 'native', 'docker-exec'),
  stdio: 'inherit',
  env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-buildvcs=false' },
});
process.exit(r.status ?? 1);
