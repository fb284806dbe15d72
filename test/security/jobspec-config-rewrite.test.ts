/**
 * Hostile job files against the driver `config` rewrite (src/jobspec/hcl-body-outline.ts,
 * rewrite-task-config-blocks.ts), which reads a submitted file before the HCL parser does:
 * blocks nested past its depth limit, an unterminated heredoc, string or block, and labels that
 * try to close the block early. Each is refused as a job file error (a 400 on the API), never a
 * crash, a hang or a config that escapes its task.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJobspec, JobspecParseError } from '../../src/jobspec/index.js';

const job = (config: string): string => `job "x" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n${config}\n      }\n    }\n  }\n}\n`;

test('blocks nested past the limit are a parse error, not a stack overflow', async () => {
  const depth = 5000;
  const src = job(`${'b {\n'.repeat(depth)}k = 1\n${'}\n'.repeat(depth)}`);
  await assert.rejects(parseJobspec(src), JobspecParseError);
});

test('unterminated heredoc, string and block are parse errors', async () => {
  for (const body of ['command = <<EOT\nnever ends\n', 'command = "never ends\n', 'b "l" {\n  k = 1\n']) {
    await assert.rejects(parseJobspec(job(body)), JobspecParseError, JSON.stringify(body));
  }
});

test('a label that holds braces and quotes stays a label of the config, inside its task', async () => {
  const parsed = await parseJobspec(job('        command = "/bin/true"\n        b "} } task \\"evil\\" {" {\n          k = 1\n        }'));
  const tasks = parsed.TaskGroups?.[0]?.Tasks ?? [];
  assert.deepEqual(tasks.map((t) => t.Name), ['t']);
  assert.deepEqual(tasks[0]?.Config?.['b'], [{ '} } task "evil" {': [{ k: 1 }] }]);
});
