import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAllocDetail, formatAllocShort } from '../../src/cli/commands/alloc-status.js';
import { formatJobDetail, formatJobList } from '../../src/cli/commands/job-status.js';
import { formatNodeDetail } from '../../src/cli/format/node-detail.js';
import { iBytes } from '../../src/cli/format/ibytes.js';
import { allocResourceUsage } from '../../src/http/routes/client-alloc.js';
import { newTaskEvent } from '../../src/client/taskrunner/task-event.js';
import type { HostStats } from '../../src/client/node/host-stats.js';
import type { Allocation, Evaluation, JobListStub, JobSummary, TaskState } from '../../src/structs/index.js';
import { mockAlloc, mockAllocMetric, mockEval, mockJob, mockNode } from '../mock/factories.js';
import { assertGolden } from './golden.js';

const NOW_MS = 1_700_000_100_000;
const T0 = 1_700_000_000_000;
const NODE_ID = 'f2d5e3c4-1111-2222-3333-444455556666';
const ALLOC_ID = 'a1b2c3d4-aaaa-bbbb-cccc-ddddeeeeffff';

function node() {
  return mockNode({ ID: NODE_ID, Name: 'node-1', NodeClass: '', Datacenter: 'dc1', NodePool: 'default' });
}

function taskState(): TaskState {
  const events = [
    newTaskEvent('Received', T0),
    newTaskEvent('Task Setup', T0 + 10, { Message: 'Building Task Directory' }),
    newTaskEvent('Started', T0 + 1000),
  ];
  return { State: 'running', Failed: false, Restarts: 0, LastRestart: null, StartedAt: new Date(T0 + 1000).toISOString(), FinishedAt: null, Events: events };
}

function allocation(over: Partial<Allocation> = {}): Allocation {
  const job = mockJob({ ID: 'web', Name: 'web' });
  const a = mockAlloc(job, node(), {
    ID: ALLOC_ID,
    EvalID: '0e1f2a3b-0000-0000-0000-000000000001',
    Name: 'web.web[0]',
    TaskGroup: 'web',
    CreateTime: T0 * 1e6,
    ModifyTime: (T0 + 30_000) * 1e6,
    DeploymentID: 'd0d0d0d0-1234-5678-9abc-def012345678',
    DeploymentStatus: { Healthy: true, Timestamp: new Date(T0 + 20_000).toISOString(), Canary: false, ModifyIndex: 120 },
    ...over,
  });
  a.AllocatedResources!.Shared.DiskMB = 300;
  a.AllocatedResources!.Shared.Networks = [{ Mode: 'host', Device: '', CIDR: '', IP: '127.0.0.1', MBits: 0, DNS: null, ReservedPorts: [{ Label: 'admin', Value: 8081, To: 0, HostNetwork: 'default' }], DynamicPorts: [{ Label: 'http', Value: 25123, To: 8080, HostNetwork: 'default' }] }];
  a.TaskStates = Object.fromEntries(Object.keys(a.AllocatedResources!.Tasks).map((t) => [t, taskState()]));
  return a;
}

const STATS = allocResourceUsage({ web: { timestamp: T0 * 1e6, memoryRssBytes: 12 * 1024 * 1024 + 300_000, cpuTotalTicks: 37.8, cpuPercent: 0.95, pids: [] } });

test('iBytes is go-humanize IBytes', () => {
  const cases: [number, string][] = [[0, '0 B'], [9, '9 B'], [1024, '1.0 KiB'], [6.3 * 1024 * 1024, '6.3 MiB'], [256 * 1024 * 1024, '256 MiB'], [7.7 * 1024 ** 3, '7.7 GiB']];
  for (const [n, want] of cases) assert.equal(iBytes(n), want, String(n));
});

test('job status of a job nothing could be placed for prints the Placement Failure section', () => {
  const job = { ...mockJob({ ID: 'example', Name: 'example', Status: 'pending', SubmitTime: T0 * 1e6 }), Datacenters: ['dc1'] };
  const failedEval: Evaluation = mockEval(job, {
    ID: '5a5a5a5a-0000-0000-0000-000000000001',
    Status: 'complete',
    CreateIndex: 10,
    BlockedEval: '6b6b6b6b-0000-0000-0000-000000000002',
    FailedTGAllocs: {
      cache: mockAllocMetric({ NodesEvaluated: 1, NodesFiltered: 1, ConstraintFiltered: { 'missing drivers': 1 } }),
      web: mockAllocMetric({ NodesEvaluated: 1, NodesExhausted: 1, DimensionExhausted: { memory: 1 } }),
    },
  });
  const blocked: Evaluation = mockEval(job, { ID: '6b6b6b6b-0000-0000-0000-000000000002', Status: 'blocked', CreateIndex: 11, TriggeredBy: 'queued-allocs' });
  const summary: JobSummary = { JobID: 'example', Namespace: 'default', Summary: { cache: { Queued: 1, Starting: 0, Running: 0, Failed: 0, Complete: 0, Lost: 0, Unknown: 0 }, web: { Queued: 1, Starting: 0, Running: 0, Failed: 0, Complete: 0, Lost: 0, Unknown: 0 } }, Children: null, CreateIndex: 1, ModifyIndex: 1 } as JobSummary;
  assertGolden('job-status-placement-failure', `${formatJobDetail(job, summary, [], NOW_MS, false, null, [failedEval, blocked])}\n`);
  // Without a blocked evaluation (the failure was resolved since), Nomad shows no section.
  assert.doesNotMatch(formatJobDetail(job, summary, [], NOW_MS, false, null, [failedEval]), /Placement Failure/);
});

test('job list says "dead (stopped)" for a stopped job', () => {
  const stub = (id: string, stop: boolean): JobListStub => ({ ID: id, Type: 'service', Priority: 50, Status: 'dead', Stop: stop, SubmitTime: T0 * 1e6 }) as JobListStub;
  assertGolden('job-list-stopped', `${formatJobList([stub('web', true), stub('batch', false)])}\n`);
});

test('alloc status shows addresses, deployment health, task resources and usage; -stats and -verbose add theirs', () => {
  const a = allocation();
  assertGolden('alloc-status', `${formatAllocDetail(a, NOW_MS, { stats: STATS })}\n`);
  assertGolden('alloc-status-stats', `${formatAllocDetail(a, NOW_MS, { stats: STATS, displayStats: true })}\n`);
  const verbose = allocation({ Metrics: mockAllocMetric({ NodesEvaluated: 2, NodesFiltered: 1, ConstraintFiltered: { '${attr.kernel.name} = windows': 1 }, AllocationTime: 1_234_567 }) });
  assertGolden('alloc-status-verbose', `${formatAllocDetail(verbose, NOW_MS, { verbose: true, stats: null })}\n`);
  assertGolden('alloc-status-short', `${formatAllocShort(a, NOW_MS)}\n`);
});

test('node status <id> shows uptime, node events, allocated resources and utilization', () => {
  const n = node();
  n.Events = [
    { Message: 'Node registered', Subsystem: 'Cluster', Details: null, Timestamp: new Date(T0).toISOString(), CreateIndex: 1 },
    { Message: 'Node drain strategy set', Subsystem: 'Drain', Details: { deadline: '1h0m0s' }, Timestamp: new Date(T0 + 60_000).toISOString(), CreateIndex: 2 },
  ];
  const host: HostStats = {
    Memory: { Total: 8 * 1024 ** 3, Available: 5 * 1024 ** 3, Used: 3 * 1024 ** 3, Free: 4 * 1024 ** 3 },
    CPU: [],
    DiskStats: [{ Device: '/dev/sda1', Mountpoint: '/', Size: 100 * 1024 ** 3, Used: 40 * 1024 ** 3, Available: 60 * 1024 ** 3, UsedPercent: 40, InodesUsedPercent: 5 }],
    AllocDirStats: { Device: '/dev/sda1', Mountpoint: '/', Size: 0, Used: 0, Available: 0, UsedPercent: 0, InodesUsedPercent: 0 },
    DeviceStats: [],
    Uptime: 3723,
    Timestamp: T0 * 1e6,
    CPUTicksConsumed: 512.6,
  };
  n.Attributes['unique.storage.volume'] = '/dev/sda1';
  assertGolden('node-status', `${formatNodeDetail(n, [allocation()], NOW_MS, false, { host, allocs: [STATS] })}\n`);
});
