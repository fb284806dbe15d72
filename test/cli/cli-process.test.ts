import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

function caravan(args: string[], env: Record<string, string> = {}): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'bin/caravan.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, CARAVAN_ADDR: '', NOMAD_ADDR: '', ...env },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('job validate: valid files exit 0', () => {
  const r = caravan(['job', 'validate', 'examples/service.hcl', 'examples/batch.hcl']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Job validation successful: examples\/service\.hcl/);
  assert.match(r.stdout, /Job validation successful: examples\/batch\.hcl/);
});

test('job validate: an invalid file exits 1 and names the problem path', () => {
  const r = caravan(['job', 'validate', 'test/fixtures/jobspecs/bad-missing-driver.hcl']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /job "web": group "api": task "srv": driver is required/);
});

test('job validate: a parse error exits 1 and names file and line', () => {
  const r = caravan(['job', 'validate', 'test/fixtures/jobspecs/bad-unknown-attribute.hcl']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /bad-unknown-attribute\.hcl:4: .*unknown attribute "drivr"/);
});

test('job validate: a missing file exits 1', () => {
  const r = caravan(['job', 'validate', 'no/such/file.hcl']);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot read job file/);
});

test('usage errors exit 2: no arguments, unknown command, unknown flag, missing file argument', () => {
  assert.equal(caravan([]).code, 2);
  assert.equal(caravan(['frobnicate']).code, 2);
  assert.equal(caravan(['job', 'validate', '-bogus', 'examples/batch.hcl']).code, 2);
  assert.equal(caravan(['job', 'validate']).code, 2);
});

test('Nomad-style single-dash flags: -var and -var=… override variables', () => {
  const r = caravan(['job', 'run', '-output', '-var', 'sleep_seconds=9', 'examples/parameterized.hcl']);
  assert.equal(r.code, 0, r.stderr);
  const job = (JSON.parse(r.stdout) as { Job: { TaskGroups: { Tasks: { Config: { args: string[] } }[] }[] } }).Job;
  assert.match(job.TaskGroups[0]!.Tasks[0]!.Config.args[1]!, /sleep 9$/);
  const r2 = caravan(['job', 'run', '-output', '-var=sleep_seconds=3', 'examples/parameterized.hcl']);
  assert.match(r2.stdout, /sleep 3"/);
});

test('job run -output prints canonical {"Job": …} without a server', () => {
  const r = caravan(['job', 'run', '-output', 'examples/service.hcl']);
  assert.equal(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { Job: { ID: string; Priority: number; Datacenters: string[]; TaskGroups: { Count: number }[] } };
  assert.equal(out.Job.ID, 'web');
  assert.equal(out.Job.Priority, 50);
  assert.deepEqual(out.Job.Datacenters, ['*']);
  assert.equal(out.Job.TaskGroups[0]!.Count, 3);
});

test('job run without -output reports that no server can be reached, naming the address', () => {
  // A loopback port nothing listens on: the error must name the address from NOMAD_ADDR.
  const r = caravan(['job', 'run', 'examples/service.hcl'], { NOMAD_ADDR: 'http://127.0.0.1:47' });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /cannot reach server at http:\/\/127\.0\.0\.1:47/);
});

test('version prints the version; --help exits 0', () => {
  const r = caravan(['version']);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^Caravan v\d+\.\d+\.\d+/);
  // The one version constant (src/structs/version.ts) is package.json's.
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  assert.equal(r.stdout.trim(), `Caravan v${pkg.version}`);
  assert.equal(caravan(['-help']).code, 0);
  assert.equal(caravan(['job', 'validate', '--help']).code, 0);
});

test('a closed stdout pipe (caravan … | head -1) ends the CLI quietly, exit 0, no EPIPE stack', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'bin/caravan.js'), 'job', 'run', '-output', 'examples/service.hcl'], {
    cwd: ROOT,
    env: { ...process.env, CARAVAN_ADDR: '', NOMAD_ADDR: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The reader goes away before the CLI has written anything: its first write meets EPIPE.
  child.stdout.destroy();
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
  assert.equal(stderr, '');
  assert.equal(code, 0);
});
