/**
 * Run as a child process by replicated-servers.test.ts: opens a server as leader with every duty
 * armed (a node's heartbeat timer, a periodic job's launch timer, the GC timer, a worker), then
 * takes its leadership away and does nothing more. It exits on its own only if losing leadership
 * left no timer and no loop running; it never closes the server.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '../../../src/server/server.js';
import { mockJob, mockNode } from '../../mock/factories.js';
import { fakeSchedulerFactory } from '../fake-scheduler.js';
import { LeadershipSwitch } from './test-cluster.js';

const dataDir = process.argv[2] ?? mkdtempSync(join(tmpdir(), 'caravan-demoted-'));
const cluster = new LeadershipSwitch();
cluster.elect('a');
const server = await Server.open({
  dataDir,
  numWorkers: 2,
  schedulerFactory: () => fakeSchedulerFactory,
  leadership: cluster.member('a', '127.0.0.1:4646'),
  gcIntervalMs: 60_000,
  heartbeat: { minTtlMs: 60_000 },
});
const node = mockNode();
await server.registerNode(node);
const base = mockJob({ ID: 'report', Name: 'report', Type: 'batch' });
await server.registerJob({ ...base, Periodic: { Enabled: true, Spec: '*/5 * * * *', SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'UTC' } });
const duties = server.duties!;
const armed = { heartbeats: duties.heartbeats.size(), periodic: duties.periodic.trackedCount() };
cluster.elect(null);
// Let the demotion (workers stopping) finish before reporting.
while (!duties.isStopped() || server.duties) await new Promise((r) => setImmediate(r));
process.stdout.write(`${JSON.stringify({ armed, leader: server.isLeader(), heartbeats: duties.heartbeats.size(), broker: duties.broker.isEnabled() })}\n`);
