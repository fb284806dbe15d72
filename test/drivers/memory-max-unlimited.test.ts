/**
 * `memory_max = -1` (Nomad 1.7 for raw_exec, 1.11 for every driver): the task keeps its memory
 * reservation and has no hard limit. Validation takes -1 and no other negative; the exec
 * driver's cgroup gets no limit (v2 memory.max "max", v1 -1) with the reservation as its soft
 * limit; docker gets Memory 0 (unlimited) with the reservation.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { validateJob } from '../../src/structs/job-validate.js';
import { detectCgroupSystem } from '../../src/drivers/exec/cgroups.js';
import { parseDockerPluginConfig } from '../../src/drivers/docker/plugin-config.js';
import { parseDockerTask } from '../../src/drivers/docker/task-config.js';
import { mockTaskConfig, tempRoot } from './task-config.js';

const fixture = (name: string): string => readFileSync(join(import.meta.dirname, '../../../test/fixtures/jobspec', name), 'utf8');

test('memory_max = -1 parses and validates; other negatives are refused naming the field', async () => {
  const job = canonicalizeJob(await parseJobspec(fixture('memory-max-unlimited.hcl')));
  const r = job.TaskGroups[0]!.Tasks[0]!.Resources;
  assert.equal(r.MemoryMB, 64);
  assert.equal(r.MemoryMaxMB, -1);
  assert.deepEqual(validateJob(job), []);
  const bad = canonicalizeJob(await parseJobspec(fixture('memory-max-unlimited.hcl').replace(/memory_max = -1$/m, 'memory_max = -2')));
  assert.deepEqual(
    validateJob(bad).map((p) => `${p.path}: ${p.message}`),
    ['job "burst": group "work": task "crunch": resources: memory_max must be -1 (no hard limit) or at least memory, got -2'],
  );
});

test('docker: memory_max = -1 is no hard limit with the reservation kept', () => {
  const root = tempRoot('caravan-docker-memmax-');
  try {
    const t = parseDockerTask(mockTaskConfig(root, { image: 'busybox:1' }, { resources: { cpuShares: 100, memoryMB: 64, memoryMaxMB: -1 } }), parseDockerPluginConfig({}));
    const hc = t.create.HostConfig as Record<string, unknown>;
    assert.equal(hc.Memory, 0, 'Docker takes Memory 0 as unlimited');
    assert.equal(hc.MemoryReservation, 64 * 1024 * 1024);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('exec cgroup: no hard memory limit, the reservation as soft limit (needs root and writable cgroups)', () => {
  const cgroups = detectCgroupSystem();
  const cg = cgroups.create(`memmax-test-${process.pid}`, { memoryBytes: 0, memorySoftBytes: 64 * 1024 * 1024, cpuShares: 100, cpuCores: 0, pidsMax: 0 });
  try {
    const v2 = cg.dirs.length === 1;
    if (v2) {
      assert.equal(readFileSync(join(cg.dirs[0]!, 'memory.max'), 'utf8').trim(), 'max');
      assert.equal(Number(readFileSync(join(cg.dirs[0]!, 'memory.low'), 'utf8')), 64 * 1024 * 1024);
    } else {
      const mem = cg.dirs.find((d) => d.includes('/memory/'))!;
      // v1 shows "no limit" as the largest page-aligned value.
      assert.ok(Number(readFileSync(join(mem, 'memory.limit_in_bytes'), 'utf8')) > 2 ** 60);
      assert.equal(Number(readFileSync(join(mem, 'memory.soft_limit_in_bytes'), 'utf8')), 64 * 1024 * 1024);
    }
  } finally {
    cg.remove();
  }
});
