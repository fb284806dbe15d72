import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { parseDuration } from '../../src/structs/duration.js';

const d = parseDuration;

function minimal(type?: string): string {
  return `job "example" {
  ${type ? `type = "${type}"` : ''}
  group "g" {
    task "t" {
      driver = "raw_exec"
      config { command = "/bin/true" }
    }
  }
}`;
}

test('service job: Nomad documented defaults', async () => {
  const job = canonicalizeJob(await parseJobspec(minimal()));
  assert.equal(job.Region, 'global');
  assert.equal(job.Namespace, 'default');
  assert.equal(job.Name, 'example');
  assert.equal(job.Type, 'service');
  assert.equal(job.Priority, 50);
  assert.deepEqual(job.Datacenters, ['*']);
  assert.equal(job.NodePool, 'default');
  assert.deepEqual({ Stagger: job.Update?.Stagger, MaxParallel: job.Update?.MaxParallel }, { Stagger: d('30s'), MaxParallel: 1 });
  const g = job.TaskGroups[0]!;
  assert.equal(g.Count, 1);
  assert.deepEqual(g.RestartPolicy, { Attempts: 2, Interval: d('30m'), Delay: d('15s'), Mode: 'fail', RenderTemplates: false });
  assert.deepEqual(g.ReschedulePolicy, {
    Attempts: 0, Interval: 0, Delay: d('30s'), DelayFunction: 'exponential', MaxDelay: d('1h'), Unlimited: true,
  });
  assert.deepEqual(g.Update, {
    Stagger: d('30s'), MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: d('10s'), HealthyDeadline: d('5m'),
    ProgressDeadline: d('10m'), Canary: 0, AutoRevert: false, AutoPromote: false,
  });
  assert.deepEqual(g.Migrate, { MaxParallel: 1, HealthCheck: 'checks', MinHealthyTime: d('10s'), HealthyDeadline: d('5m') });
  assert.deepEqual(g.EphemeralDisk, { Sticky: false, Migrate: false, SizeMB: 300 });
  const t = g.Tasks[0]!;
  assert.equal(t.KillTimeout, d('5s'));
  assert.deepEqual(t.LogConfig, { MaxFiles: 10, MaxFileSizeMB: 10, Disabled: false });
  assert.equal(t.Resources.CPU, 100);
  assert.equal(t.Resources.MemoryMB, 300);
  assert.deepEqual(t.RestartPolicy, g.RestartPolicy);
});

test('batch job: restart 3 in 24h, reschedule once in 24h with constant 5s delay, no update or migrate', async () => {
  const job = canonicalizeJob(await parseJobspec(minimal('batch')));
  const g = job.TaskGroups[0]!;
  assert.deepEqual(g.RestartPolicy, { Attempts: 3, Interval: d('24h'), Delay: d('15s'), Mode: 'fail', RenderTemplates: false });
  assert.deepEqual(g.ReschedulePolicy, {
    Attempts: 1, Interval: d('24h'), Delay: d('5s'), DelayFunction: 'constant', MaxDelay: 0, Unlimited: false,
  });
  assert.equal(g.Update, null);
  assert.equal(g.Migrate, null);
  assert.equal(job.Update?.MaxParallel, 0);
});

test('system and sysbatch jobs: restart as service/batch, no reschedule policy', async () => {
  const system = canonicalizeJob(await parseJobspec(minimal('system')));
  assert.equal(system.TaskGroups[0]!.RestartPolicy?.Attempts, 2);
  assert.equal(system.TaskGroups[0]!.ReschedulePolicy, null);
  const sysbatch = canonicalizeJob(await parseJobspec(minimal('sysbatch')));
  assert.equal(sysbatch.TaskGroups[0]!.RestartPolicy?.Attempts, 3);
  assert.equal(sysbatch.TaskGroups[0]!.ReschedulePolicy, null);
});

test('explicit values win over defaults; zero is not missing; task restart merges over the group', async () => {
  const draft = await parseJobspec(`job "x" {
  priority = 70
  update { max_parallel = 3 }
  group "g" {
    count = 0
    restart {
      attempts = 5
      mode     = "delay"
    }
    update { canary = 1 }
    task "t" {
      driver = "raw_exec"
      restart { delay = "1s" }
      kill_timeout = "20s"
      resources {
        cpu        = 500
        memory     = 128
        memory_max = 256
      }
      logs {
        max_files     = 3
        max_file_size = 5
      }
    }
  }
}`);
  const job = canonicalizeJob(draft);
  const g = job.TaskGroups[0]!;
  assert.equal(job.Priority, 70);
  assert.equal(g.Count, 0);
  assert.deepEqual(g.RestartPolicy, { Attempts: 5, Interval: d('30m'), Delay: d('15s'), Mode: 'delay', RenderTemplates: false });
  assert.deepEqual(g.Tasks[0]!.RestartPolicy, { Attempts: 5, Interval: d('30m'), Delay: d('1s'), Mode: 'delay', RenderTemplates: false });
  assert.equal(g.Update?.MaxParallel, 3);
  assert.equal(g.Update?.Canary, 1);
  assert.equal(g.Update?.HealthCheck, 'checks');
  assert.equal(job.Update?.MaxParallel, 3);
  assert.equal(g.Tasks[0]!.KillTimeout, d('20s'));
  assert.deepEqual(
    { cpu: g.Tasks[0]!.Resources.CPU, mem: g.Tasks[0]!.Resources.MemoryMB, max: g.Tasks[0]!.Resources.MemoryMaxMB },
    { cpu: 500, mem: 128, max: 256 },
  );
  assert.deepEqual(g.Tasks[0]!.LogConfig, { MaxFiles: 3, MaxFileSizeMB: 5, Disabled: false });
});

test('periodic defaults: enabled, cron spec type, UTC', async () => {
  const job = canonicalizeJob(await parseJobspec(`job "p" {
  type = "batch"
  periodic {
    cron             = "*/15 * * * *"
    prohibit_overlap = true
  }
  group "g" {
    task "t" { driver = "raw_exec" }
  }
}`));
  assert.deepEqual(job.Periodic, { Enabled: true, Spec: '*/15 * * * *', SpecType: 'cron', ProhibitOverlap: true, TimeZone: 'UTC' });
});

test('canonicalizeJob does not modify its input and is idempotent', async () => {
  const draft = await parseJobspec(minimal());
  const before = JSON.stringify(draft);
  const once = canonicalizeJob(draft);
  assert.equal(JSON.stringify(draft), before);
  assert.deepEqual(canonicalizeJob(once), once);
});
