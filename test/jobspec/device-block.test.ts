import { test } from 'node:test';
import assert from 'node:assert/strict';
import { validateJob } from '../../src/structs/job-validate.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { JobspecParseError, parseJobspec, parseJobspecFile } from '../../src/jobspec/index.js';
import { repoPath } from './repo-root.js';

const fixture = (name: string): string => repoPath('test/fixtures/jobspecs', name);

test('task-devices.hcl: every device block is kept in the shape of Nomad\'s RequestedDevice, in order', async () => {
  const draft = await parseJobspecFile(fixture('task-devices.hcl'));
  const job = canonicalizeJob(draft);
  const devices = job.TaskGroups[0]!.Tasks[0]!.Resources.Devices;
  assert.deepEqual(devices, [
    { Name: 'gpu' },
    {
      Name: 'nvidia/gpu',
      Count: 2,
      Constraints: [{ LTarget: '${device.attr.memory}', RTarget: '4 GiB', Operand: '>=' }],
      Affinities: [{ LTarget: '${device.model}', RTarget: 'A100', Operand: '=', Weight: 50 }],
    },
    {
      Name: 'acme/fpga/x1',
      FirstAvailable: [
        { Count: 1, Constraints: [{ LTarget: '${device.attr.generation}', RTarget: '2', Operand: '=' }] },
        { Count: 2 },
      ],
    },
  ]);
});

test('task-devices.hcl: registration refuses each device by name', async () => {
  const job = canonicalizeJob(await parseJobspecFile(fixture('task-devices.hcl')));
  const messages = validateJob(job).map((p) => `${p.path}: ${p.message}`);
  for (const name of ['gpu', 'nvidia/gpu', 'acme/fpga/x1']) {
    assert.ok(
      messages.some((m) => m.includes(`task "encode": resources: device "${name}": devices (GPUs and other device plugins) are not supported by Caravan`)),
      `expected a refusal for ${name} in ${JSON.stringify(messages, null, 1)}`,
    );
  }
});

test('a device block with an unknown attribute or a negative count is a parse error naming the field', async () => {
  const src = (body: string): string =>
    `job "j" {\n group "g" {\n task "t" {\n driver = "exec"\n resources {\n device "gpu" {\n ${body}\n }\n }\n }\n }\n}\n`;
  await assert.rejects(parseJobspec(src('cuont = 1')), (err: unknown) => {
    assert.ok(err instanceof JobspecParseError);
    assert.match(err.message, /unknown attribute "cuont"/);
    return true;
  });
  await assert.rejects(parseJobspec(src('count = -1')), (err: unknown) => {
    assert.ok(err instanceof JobspecParseError);
    assert.match(err.message, /count must be zero or more/);
    return true;
  });
});
