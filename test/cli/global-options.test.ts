import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveGlobalOptions, DEFAULT_ADDRESS } from '../../src/cli/global-options.js';
import { normalizeArgv } from '../../src/cli/normalize-argv.js';
import { main } from '../../src/cli/main.js';

test('resolveGlobalOptions: flag, then CARAVAN_*, then NOMAD_*, then default', () => {
  const cases: { name: string; flags: { address?: string; token?: string }; env: NodeJS.ProcessEnv; address: string; token: string | undefined }[] = [
    { name: 'defaults', flags: {}, env: {}, address: DEFAULT_ADDRESS, token: undefined },
    { name: 'nomad env', flags: {}, env: { NOMAD_ADDR: 'http://n:1', NOMAD_TOKEN: 'nt' }, address: 'http://n:1', token: 'nt' },
    { name: 'caravan env wins', flags: {}, env: { NOMAD_ADDR: 'http://n:1', CARAVAN_ADDR: 'http://c:2', NOMAD_TOKEN: 'nt', CARAVAN_TOKEN: 'ct' }, address: 'http://c:2', token: 'ct' },
    { name: 'flag wins', flags: { address: 'http://f:3/', token: 'ft' }, env: { CARAVAN_ADDR: 'http://c:2', CARAVAN_TOKEN: 'ct' }, address: 'http://f:3', token: 'ft' },
    { name: 'scheme added, empty env ignored', flags: {}, env: { CARAVAN_ADDR: '', NOMAD_ADDR: '127.0.0.1:5000' }, address: 'http://127.0.0.1:5000', token: undefined },
  ];
  for (const c of cases) {
    const o = resolveGlobalOptions(c.flags, c.env);
    assert.equal(o.address, c.address, c.name);
    assert.equal(o.token, c.token, c.name);
    assert.equal(o.namespace, 'default', c.name);
  }
});

test('normalizeArgv: single-dash long flags get a second dash; the rest is untouched', () => {
  assert.deepEqual(
    normalizeArgv(['job', 'run', '-output', '-var=a=b', '-var', 'x=-y', '-h', '-5', '--json', '--', '-raw']),
    ['job', 'run', '--output', '--var=a=b', '--var', 'x=-y', '-h', '-5', '--json', '--', '-raw'],
  );
});

test('main runs in-process with captured output', async () => {
  let out = '';
  let err = '';
  const code = await main(['node', 'caravan', 'job', 'validate', '-json', 'examples/batch.hcl', 'test/fixtures/jobspecs/bad-count.hcl'], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
  });
  assert.equal(code, 1, err);
  const results = JSON.parse(out) as { File: string; Valid: boolean; Errors: string[] }[];
  assert.deepEqual(results.map((r) => r.Valid), [true, false]);
  assert.match(results[1]!.Errors[0]!, /group "api": count must be a non-negative whole number/);
});
