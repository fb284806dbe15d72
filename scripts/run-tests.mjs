// Runs the compiled tests with node's test runner: unit tests first, then integration tests.
// Usage: node scripts/run-tests.mjs [unit|integration] [filter]
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function find(dir) {
  let out = [];
  let entries;
  try { entries = readdirSync(dir); } catch { return out; }
  for (const name of entries) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out = out.concat(find(p));
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out.sort();
}

const which = process.argv[2] ?? 'all';
const filter = process.argv[3];
const all = find('dist/test').filter((f) => !filter || f.includes(filter));
const unit = all.filter((f) => !f.includes('/integration/'));
const integration = all.filter((f) => f.includes('/integration/'));
const files = which === 'unit' ? unit : which === 'integration' ? integration : [...unit, ...integration];
if (files.length === 0) {
  console.error('no test files found under dist/test (run npm run build first)');
  process.exit(1);
}
// A hang must fail the run, not hold CI until its own limit (90 min with the installs): every test has 5 minutes, and the
// whole run 70 (a test file kept alive by a leaked handle never ends on its own).
const PER_TEST_MS = 5 * 60_000;
const WHOLE_RUN_MS = 70 * 60_000;
const r = spawnSync(
  process.execPath,
  ['--test', '--test-reporter=spec', '--test-concurrency=1', `--test-timeout=${PER_TEST_MS}`, ...files],
  { stdio: 'inherit', timeout: WHOLE_RUN_MS, killSignal: 'SIGKILL' },
);
if (r.error || r.signal) console.error(`test run stopped: ${r.error?.message ?? r.signal} (limit ${WHOLE_RUN_MS / 60_000} min)`);
process.exit(r.status ?? 1);
