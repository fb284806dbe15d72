/**
 * Woken watches do not hold the server's loop: 1,000 clients' allocation watches (`GET
 * /v1/internal/node/:id/client-allocs?index=…`, each on its own kept-alive socket, over real
 * loopback HTTP) are woken by one apply that gives every node an allocation, as a system job's
 * plan does. A status read sent right after the apply is answered while the watches are still
 * being answered — before, all 1,000 answers were written in the apply's turn and no socket was
 * read until the last — and every watch is answered once, at an index at least the apply's.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import type { Node } from '../../src/structs/index.js';
import { mockAlloc, mockJob } from '../mock/factories.js';
import { startServer, type ServerUnderTest } from './real-server.js';
import { registerMockNodes, settled } from '../server/settled-server.js';

const NODES = 1000;
let sut: ServerUnderTest;
let base = '';
const nodes: Node[] = [];
/** What the server answered, in the order it sent it: 'watch' or 'status'. */
const sent: string[] = [];
const agents: Agent[] = [];

before(async () => {
  // The nodes do not heartbeat during the test: a TTL longer than it.
  sut = await startServer({ random: () => 0 }, { numWorkers: 1, heartbeat: { minTtlMs: 3_600_000, graceMs: 3_600_000 } });
  sut.app.addHook('onSend', (req, _reply, payload, done) => {
    if (req.url.includes('/client-allocs?index=')) sent.push('watch');
    else if (req.url.startsWith('/v1/status/leader')) sent.push('status');
    done(null, payload);
  });
  await sut.app.listen({ host: '127.0.0.1', port: 0 });
  base = `http://127.0.0.1:${(sut.app.server.address() as { port: number }).port}`;
  await settled(sut.server);
  nodes.push(...(await registerMockNodes(sut.server, NODES)));
});

after(async () => {
  for (const a of agents) a.destroy();
  await sut.close();
});

function get(path: string, agent: Agent, token = ''): Promise<{ status: number; index: number }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { agent, headers: { 'X-Nomad-Token': token } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, index: Number(res.headers['x-nomad-index'] ?? 0) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

const newAgent = (): Agent => {
  const a = new Agent({ keepAlive: true, maxSockets: 1 });
  agents.push(a);
  return a;
};

test('1,000 watches woken by one apply are answered a slice at a time: a status read sent after the apply is answered before the last of them', async () => {
  const store = sut.server.store;
  const held: Promise<{ status: number; index: number }>[] = [];
  for (let i = 0; i < NODES; i += 100) {
    await Promise.all(
      nodes.slice(i, i + 100).map(async (n) => {
        // One client, one connection: its first read, then its watch held on the same socket.
        const agent = newAgent();
        const path = `/v1/internal/node/${n.ID}/client-allocs`;
        const first = await get(path, agent, n.SecretID);
        assert.equal(first.status, 200);
        held.push(get(`${path}?index=${first.index}&wait=10m`, agent, n.SecretID));
      }),
    );
  }
  for (let i = 0; i < 200 && store.blockedWatches() < NODES; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(store.blockedWatches(), NODES, 'every watch is held');
  const statusAgent = newAgent();
  assert.equal((await get('/v1/status/leader', statusAgent)).status, 200);
  sent.length = 0;

  // One apply, as a system job's plan: an allocation on every node (written straight into the
  // state store, so that what is measured is the wake, not the scheduler).
  const job = mockJob({ ID: 'everywhere', Type: 'system' });
  const index = store.latestIndex() + 1;
  store.transact(() => {
    store.putJob(job, index);
    for (const n of nodes) store.putAlloc(mockAlloc(job, n, { CreateIndex: index, ModifyIndex: index, AllocModifyIndex: index }), index);
    store.finishApply(index);
  });
  const status = get('/v1/status/leader', statusAgent);

  const answers = await Promise.all(held);
  assert.equal((await status).status, 200);
  assert.ok(
    answers.every((a) => a.status === 200 && a.index >= index),
    'every watch answered 200 at an index at least the apply',
  );
  assert.equal(sent.filter((s) => s === 'watch').length, NODES, 'each watch answered once');
  const before = sent.indexOf('status');
  assert.ok(before >= 0 && before < NODES, `the status read was answered after ${before} of the ${NODES} woken watches`);
  assert.equal(store.blockedWatches(), 0);
});
