import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { JobspecParseError, loadJobFile } from '../../src/jobspec/index.js';
import { JobValidationError } from '../../src/structs/job-validate.js';
import { repoPath } from './repo-root.js';

interface Case {
  name: string;
  file: string;
  /** Each must appear in one message (with its path). */
  expect: string[];
  /** The line the first problem is reported at, when the parser can locate it. */
  line?: number;
  kind: 'parse' | 'validate';
}

const CASES: Case[] = [
  { name: 'missing driver', file: 'bad-missing-driver.hcl', kind: 'validate', expect: ['job "web": group "api": task "srv": driver is required'] },
  { name: 'unknown attribute with line', file: 'bad-unknown-attribute.hcl', kind: 'parse', line: 4, expect: ['job "web": group "api": task "srv": unknown attribute "drivr"'] },
  { name: 'unknown block with line', file: 'bad-unknown-block.hcl', kind: 'parse', line: 3, expect: ['job "web": group "api": unknown block "restrat"'] },
  { name: 'duplicate group and task names', file: 'bad-duplicate-names.hcl', kind: 'parse', expect: ['job "web": duplicate group "api"', 'group "api": duplicate task "srv"'] },
  { name: 'negative count', file: 'bad-count.hcl', kind: 'validate', expect: ['job "web": group "api": count must be a non-negative whole number, got -1'] },
  { name: 'bad duration', file: 'bad-duration.hcl', kind: 'parse', line: 5, expect: ['task "srv": "kill_timeout" must be a duration'] },
  { name: 'unknown type and priority out of range', file: 'bad-type-priority.hcl', kind: 'validate', expect: ['job "web": unknown job type "daemon"', 'job "web": priority must be between 1 and 100, got 200'] },
  { name: 'bad lifecycle hook, poststop sidecar', file: 'bad-lifecycle.hcl', kind: 'validate', expect: ['task "init": lifecycle: hook must be one of', 'task "cleanup": lifecycle: a poststop task cannot be a sidecar'] },
  { name: 'restart mode', file: 'bad-restart-mode.hcl', kind: 'validate', expect: ['group "api": restart: mode must be "fail" or "delay", got "retry"'] },
  { name: 'cpu minimum and memory_max < memory', file: 'bad-resources.hcl', kind: 'validate', expect: ['task "srv": resources: cpu must be at least', 'memory_max (128 MB) must not be less than memory (256 MB)'] },
  { name: 'unknown constraint operator', file: 'bad-constraint-operator.hcl', kind: 'validate', expect: ['job "web": constraint 1: unknown operator "~="'] },
  { name: 'unknown delay function', file: 'bad-reschedule.hcl', kind: 'validate', expect: ['group "api": reschedule: delay_function must be one of'] },
  { name: 'periodic system job', file: 'bad-periodic-system.hcl', kind: 'validate', expect: ['job "web": periodic: periodic can not be used with "system" jobs'] },
  { name: 'parameterized payload value', file: 'bad-payload.hcl', kind: 'validate', expect: ['job "web": parameterized: payload must be one of optional, required, forbidden'] },
  { name: 'invalid static port, duplicate label', file: 'bad-ports.hcl', kind: 'validate', expect: ['port "http": static port must be within 1..65535, got 70000', 'port label "http" is already used'] },
  { name: 'group network mode, hostname and dns', file: 'bad-network.hcl', kind: 'validate', expect: ['group "api": network: mode "overlay" is not one of "host", "bridge", "none" or "cni/<name>"', 'group "api": network: hostname "not a host" is not a valid DNS name', 'group "api": network: dns: servers entry'] },
  { name: 'ID with a space', file: 'bad-id.hcl', kind: 'validate', expect: ['job "my web": job ID "my web" contains a space'] },
  { name: 'syntax error with line', file: 'bad-syntax.hcl', kind: 'parse', line: 3, expect: ['syntax error'] },
  { name: 'undeclared variable', file: 'bad-undeclared-var.hcl', kind: 'parse', line: 3, expect: ['reference to undeclared variable "var.replicas"'] },
  { name: 'typos, in line order with suggestions', file: 'bad-typos.hcl', kind: 'parse', line: 4, expect: ['group "api": unknown attribute "cont". Did you mean "count"?', 'group "api": unknown block "restrat". Did you mean "restart"?', 'resources: unknown attribute "memroy". Did you mean "memory"?'] },
  { name: 'variable validation', file: 'bad-variable-validation.hcl', kind: 'parse', line: 6, expect: ['variable "replicas": invalid value: The replicas must be at most 10.'] },
  {
    name: 'HCL2 expression errors: a locals cycle, a missing key, an unknown function',
    file: 'bad-hcl2-expression.hcl',
    kind: 'parse',
    expect: ['local.a refers to itself', 'group "api": count: lookup(): the given key "two" does not exist', 'meta: y: call to unknown function "nosuch"'],
  },
  { name: 'wrong attribute types', file: 'bad-types.hcl', kind: 'parse', expect: ['group "api": "count" must be a number, got "three"', 'task "srv": "leader" must be true or false'] },
];

test('every bad-*.hcl fixture has a case', () => {
  const files = readdirSync(repoPath('test/fixtures/jobspecs')).filter((f) => f.startsWith('bad-'));
  assert.deepEqual(files.sort(), CASES.map((c) => c.file).sort());
});

for (const c of CASES) {
  test(`rejects ${c.file}: ${c.name}`, async () => {
    const path = repoPath('test/fixtures/jobspecs', c.file);
    const err = await loadJobFile(path).then(
      () => assert.fail('expected the job to be rejected'),
      (e: unknown) => e,
    );
    if (c.kind === 'parse') {
      assert.ok(err instanceof JobspecParseError, `expected JobspecParseError, got ${String(err)}`);
      assert.equal(err.code, 'JOBSPEC_INVALID');
      for (const p of err.problems) assert.equal(p.file, path);
      if (c.line !== undefined) assert.equal(err.problems[0]!.line, c.line, err.message);
    } else {
      assert.ok(err instanceof JobValidationError, `expected JobValidationError, got ${String(err)}`);
      assert.equal(err.code, 'JOB_INVALID');
    }
    for (const want of c.expect) assert.ok(err.message.includes(want), `missing ${JSON.stringify(want)} in:\n${err.message}`);
  });
}
