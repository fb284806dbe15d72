// Runs the Go compatibility suite (test/compat): Nomad's official Go API client against a real
// agent the suite starts itself. Needs `go` on PATH (CI installs it); where it is missing the
// suite is skipped, and this says so loudly.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'test', 'compat');
const probe = spawnSync('go', ['version'], { encoding: 'utf8' });
if (probe.error || probe.status !== 0) {
  console.log('\n*** SKIPPED: the Go compatibility suite (test/compat) — no `go` on PATH. Install Go to run it. ***\n');
  process.exit(0);
}
console.log(`==> Go compatibility suite (${probe.stdout.trim()})`);
const r = spawnSync('go', ['test', '-count=1', './...'], { cwd: dir, stdio: 'inherit' });
process.exit(r.status ?? 1);
