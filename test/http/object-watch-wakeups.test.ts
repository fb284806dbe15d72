/**
 * What blocking reads of one object cost while other objects change: held
 * `GET /v1/allocation/:id`, `/v1/job/:id`, `/v1/job/:id/allocations`, `/v1/job/:id/summary`,
 * `/v1/evaluation/:id`, `/v1/deployment/:id`, `/v1/job/:id/evaluations`, `/v1/job/:id/deployments`
 * `/v1/job/:id/deployment`, `/v1/evaluation/:id/allocations` and `/v1/deployment/allocations/:id`
 * queries on job "a" and its objects, against the
 * real server and HTTP layer, are not woken (not even to read again and sleep) by job "b" being
 * placed, updated by its clients and rolled to a new version; a write to one allocation of "a"
 * answers that allocation's readers and the job's allocation list, and no other allocation's.
 * Clients' host volume watches (`/v1/internal/node/:id/host-volumes`) wake for their own node's
 * volumes only. Held `GET /v1/job/:id/versions` and `GET /v1/volume/host/:id` wake for that job's
 * versions and that volume only (not for another job's new version, allocation writes or another
 * node's volume). Wakeups are counted by the state store (caravan_state_watch_wakeups).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { Allocation, Job, Node } from '../../src/structs/index.js';
import { Table } from '../../src/server/state/state-reader.js';
import { mockTaskGroup } from '../mock/factories.js';
import { serviceJob, startServer, type ServerUnderTest } from './real-server.js';
import { registerMockNodes, settled } from '../server/settled-server.js';

const NODES = 200;
const ALLOCS = 20;
const S = 1_000_000_000;
let sut: ServerUnderTest;
const nodes: Node[] = [];

before(async () => {
  // Heartbeat TTLs of an hour: no node is marked down (a write) while the test runs.
  sut = await startServer({ random: () => 0 }, { numWorkers: 1, heartbeat: { minTtlMs: 3_600_000 } });
  await settled(sut.server);
  nodes.push(...(await registerMockNodes(sut.server, NODES)));
});

after(async () => {
  await sut.close();
});

const turns = async (n: number): Promise<void> => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

/**
 * Waits until `cond()` holds and the log has stopped moving (what the leader writes after a
 * placement — job status, deployment progress — is done), polling without blocking on the state
 * (a blocked helper would be counted as a wakeup).
 */
async function quiet(cond: () => boolean, what: string): Promise<void> {
  let last = -1;
  let still = 0;
  for (let i = 0; i < 500 && (!cond() || still < 5); i++) {
    await new Promise((r) => setTimeout(r, 10));
    const now = sut.server.state.latestIndex();
    still = now === last ? still + 1 : 0;
    last = now;
  }
  assert.ok(cond(), `timed out waiting for ${what}`);
}

/** A service job of `count` allocations with a deployment whose health is set by hand (no timer writes). */
function deployedJob(id: string, count: number, over: Partial<Job> = {}): Job {
  const update = { Stagger: 0, MaxParallel: count, HealthCheck: 'manual', MinHealthyTime: S, HealthyDeadline: 300 * S, ProgressDeadline: 600 * S, Canary: 0, AutoRevert: false, AutoPromote: false };
  return serviceJob(id, count, { TaskGroups: [mockTaskGroup({ Name: 'web', Count: count, Update: update })], ...over });
}

async function place(job: Job): Promise<{ evalId: string }> {
  const res = await sut.server.registerJob(job);
  await quiet(() => sut.server.state.evalById(res.evalId)?.Status === 'complete', `placement of ${job.ID}`);
  return { evalId: res.evalId };
}

/** Holds one blocking query per URL at the index its first answer gave; tracks which returned. */
async function hold(urls: string[], token?: (i: number) => string): Promise<{ returned: Set<number>; pending: Promise<LightMyRequestResponse>[] }> {
  const returned = new Set<number>();
  const pending: Promise<LightMyRequestResponse>[] = [];
  for (const [i, url] of urls.entries()) {
    const headers = token ? { 'X-Nomad-Token': token(i) } : {};
    const first = await sut.app.inject({ url, headers });
    assert.equal(first.statusCode, 200, `${url}: ${first.body}`);
    const index = Number(first.headers['x-nomad-index']);
    assert.ok(index > 0);
    pending.push(
      sut.app.inject({ url: `${url}?index=${index}&wait=10m`, headers }).then((r) => {
        returned.add(i);
        return r;
      }),
    );
  }
  await turns(20);
  assert.deepEqual([...returned], [], 'every query is held');
  return { returned, pending };
}

const wakeups = (): number => sut.server.state.watchWakeups?.() ?? Number.NaN;

function running(a: Allocation): { ID: string; NodeID: string; ClientStatus: string; ClientDescription: string } {
  return { ID: a.ID, NodeID: a.NodeID, ClientStatus: 'running', ClientDescription: '' };
}

test('held reads of one job and its objects wake for that job alone', async () => {
  const { server } = sut;
  const placedA = await place(deployedJob('a', ALLOCS));
  const allocsA = server.state.allocsByJob('default', 'a');
  const [deployA] = server.state.deploymentsByJob('default', 'a');
  assert.ok(deployA, 'job a has a deployment');
  await place(deployedJob('b', ALLOCS));

  const allocWatch = await hold(allocsA.map((a) => `/v1/allocation/${a.ID}`));
  const [JOB, JOB_ALLOCS, SUMMARY, EVAL, DEPLOYMENT, JOB_EVALS, JOB_DEPLOYMENTS, JOB_LATEST, EVAL_ALLOCS, DEPLOYMENT_ALLOCS] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
  const jobWatch = await hold([
    '/v1/job/a',
    '/v1/job/a/allocations',
    '/v1/job/a/summary',
    `/v1/evaluation/${placedA.evalId}`,
    `/v1/deployment/${deployA.ID}`,
    '/v1/job/a/evaluations',
    '/v1/job/a/deployments',
    '/v1/job/a/deployment',
    `/v1/evaluation/${placedA.evalId}/allocations`,
    `/v1/deployment/allocations/${deployA.ID}`,
  ]);
  const w0 = wakeups();

  // Job b's clients report its allocations running (allocation, summary and job status writes).
  const allocsB = server.state.allocsByJob('default', 'b');
  for (const a of allocsB) await server.updateAllocsFromClient([running(a)], server.state.nodeById(a.NodeID)!.SecretID);
  // Job b rolls to a new version: job, evaluation, plan, deployment and allocation writes.
  await place(deployedJob('b', ALLOCS, { Meta: { version: '2' } }));
  assert.equal(server.state.jobById('default', 'b')?.Version, 1);
  assert.equal(server.state.deploymentsByJob('default', 'b').length, 2, 'job b has a new deployment');
  assert.equal(server.state.allocsByJob('default', 'b').filter((a) => a.DesiredStatus === 'stop').length, ALLOCS, 'job b was rolled');
  await turns(20);
  assert.deepEqual([...allocWatch.returned], [], "a write to job b answered a read of one of a's allocations");
  assert.deepEqual([...jobWatch.returned], [], 'a write to job b answered a read of job a');
  assert.equal(wakeups(), w0, 'writes to job b woke a read of job a or its objects');

  // One allocation of job a changes: its readers and the job's allocation list answer, no other allocation's.
  const changed = 3;
  const target = allocsA[changed]!;
  await server.updateAllocsFromClient([running(target)], server.state.nodeById(target.NodeID)!.SecretID);
  await turns(20);
  assert.deepEqual([...allocWatch.returned], [changed], 'only the changed allocation answered');
  const answer = await allocWatch.pending[changed]!;
  const now = server.state.allocById(target.ID)!;
  assert.equal(answer.json<Allocation>().ClientStatus, 'running');
  assert.equal(Number(answer.headers['x-nomad-index']), now.ModifyIndex, "the allocation's own index");
  assert.ok(jobWatch.returned.has(JOB_ALLOCS), "the job's allocation list answered");
  const list = await jobWatch.pending[JOB_ALLOCS]!;
  assert.equal(Number(list.headers['x-nomad-index']), server.state.tableIndex(Table.Allocs), "the allocation table's index, as Nomad's Job.Allocations");
  assert.ok(jobWatch.returned.has(SUMMARY), "the job's summary (one more running) answered");
  assert.ok(jobWatch.returned.has(EVAL_ALLOCS) && jobWatch.returned.has(DEPLOYMENT_ALLOCS), "the evaluation's and the deployment's allocations answered");
  const evalAllocs = await jobWatch.pending[EVAL_ALLOCS]!;
  assert.equal(evalAllocs.json<unknown[]>().length, ALLOCS);
  // The job (already running), its evaluations and its deployment (health set by hand) did not change.
  assert.deepEqual([JOB, EVAL, DEPLOYMENT, JOB_EVALS, JOB_DEPLOYMENTS, JOB_LATEST].filter((i) => jobWatch.returned.has(i)), []);
});

test("held host volume watches of 200 clients wake for their own node's volumes only", async () => {
  const { server } = sut;
  const watch = await hold(
    nodes.map((n) => `/v1/internal/node/${n.ID}/host-volumes`),
    (i) => nodes[i]!.SecretID,
  );
  const w0 = wakeups();
  const on = 17;
  const node = nodes[on]!;
  // Registering a volume on one node writes it (pending) and waits for that node's report.
  const registering = sut.app.inject({ method: 'PUT', url: '/v1/volume/host/register', payload: { Volume: { Name: 'data', NodeID: node.ID, HostPath: '/srv/data' } } });
  for (let i = 0; i < 500 && server.state.hostVolumesByNode(node.ID).length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const [vol] = server.state.hostVolumesByNode(node.ID);
  assert.ok(vol, 'the volume was written');
  await turns(20);
  assert.deepEqual([...watch.returned], [on], "only the volume's node's watch answered");
  assert.equal(wakeups() - w0, 1, 'one wakeup for one volume');
  const answer = await watch.pending[on]!;
  assert.deepEqual(answer.json<{ ID: string }[]>().map((v) => v.ID), [vol.ID]);
  assert.equal(Number(answer.headers['x-nomad-index']), vol.ModifyIndex, "the index of the node's volumes");

  // The node reports it created: the register answers, and still no other node's watch wakes.
  const report = await sut.app.inject({ method: 'PUT', url: '/v1/internal/host-volumes/report', headers: { 'X-Nomad-Token': node.SecretID }, payload: { ID: vol.ID, Op: 'create', HostPath: '/srv/data' } });
  assert.equal(report.statusCode, 200, report.body);
  assert.equal((await registering).statusCode, 200);
  await turns(20);
  assert.deepEqual([...watch.returned], [on]);
  assert.equal(wakeups() - w0, 1, "the report woke no other node's watch");
});

/** Registers a host volume on `node` and answers its node's report for it (as its client would). */
async function registerVolume(node: Node, name: string, id?: string): Promise<{ ID: string; ModifyIndex: number }> {
  const { server } = sut;
  const registering = sut.app.inject({ method: 'PUT', url: '/v1/volume/host/register', payload: { Volume: { ID: id, Name: name, NodeID: node.ID, HostPath: `/srv/${name}` } } });
  const written = (): boolean => server.state.hostVolumesByNode(node.ID).some((v) => v.Name === name);
  for (let i = 0; i < 500 && !written(); i++) await new Promise((r) => setTimeout(r, 10));
  const vol = server.state.hostVolumesByNode(node.ID).find((v) => v.Name === name);
  assert.ok(vol, `volume ${name} was written`);
  if (id === undefined) {
    const report = await sut.app.inject({ method: 'PUT', url: '/v1/internal/host-volumes/report', headers: { 'X-Nomad-Token': node.SecretID }, payload: { ID: vol.ID, Op: 'create', HostPath: `/srv/${name}` } });
    assert.equal(report.statusCode, 200, report.body);
  }
  const res = await registering;
  assert.equal(res.statusCode, 200, res.body);
  await quiet(() => true, `volume ${name}`);
  return server.state.hostVolumeById(vol.ID)!;
}

test("held reads of one job's versions and of one host volume wake for that object alone", async () => {
  const { server } = sut;
  // (Registering a volume here answers this node's held watch from the test above, before w0.)
  const node = nodes[40]!;
  await place(deployedJob('c', 5));
  await place(deployedJob('d', 5));
  const vol = await registerVolume(node, 'mine');
  const [VERSIONS, VOLUME] = [0, 1];
  const held = await hold(['/v1/job/c/versions', `/v1/volume/host/${vol.ID}`]);
  const w0 = wakeups();

  // Writes to other objects of the same tables: job d rolls to a new version (the versions
  // table), its clients report its allocations running (the allocation table), and another
  // volume is registered on the same node (the host volume table).
  await place(deployedJob('d', 5, { Meta: { version: '2' } }));
  assert.equal(server.state.jobVersions('default', 'd').length, 2);
  for (const a of server.state.allocsByJob('default', 'd').filter((x) => x.DesiredStatus === 'run')) {
    await server.updateAllocsFromClient([running(a)], server.state.nodeById(a.NodeID)!.SecretID);
  }
  await registerVolume(node, 'theirs');
  await turns(20);
  assert.deepEqual([...held.returned], [], "a write to another job's versions, an allocation or another volume answered the held reads");
  assert.equal(wakeups(), w0, "writes to other objects woke a held read of job c's versions or of the volume");

  // Job c's version 0 is tagged: its versions answer, at the highest ModifyIndex among them (Nomad's GetJobVersions).
  const tagged = await sut.app.inject({ method: 'PUT', url: '/v1/job/c/versions/first/tag', payload: { Version: 0 } });
  assert.equal(tagged.statusCode, 200, tagged.body);
  await turns(20);
  assert.deepEqual([...held.returned], [VERSIONS], "only the read of job c's versions answered");
  const versions = await held.pending[VERSIONS]!;
  const stored = server.state.jobVersions('default', 'c');
  assert.equal(versions.json<{ Versions: { VersionTag: { Name: string } | null }[] }>().Versions[0]?.VersionTag?.Name, 'first');
  assert.equal(Number(versions.headers['x-nomad-index']), Math.max(...stored.map((v) => v.ModifyIndex)), 'the highest ModifyIndex of the versions');

  // The volume is registered again (same path: updated in place): its reader answers, at the volume's index.
  const updated = await registerVolume(node, 'mine', vol.ID);
  await turns(20);
  assert.ok(held.returned.has(VOLUME), "the volume's reader answered");
  const answer = await held.pending[VOLUME]!;
  assert.equal(Number(answer.headers['x-nomad-index']), updated.ModifyIndex, "the volume's own index");
  assert.equal(wakeups() - w0, 2, 'one wakeup for each object written');
});
