import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpServer } from '../../src/http/http-server.js';
import type { Allocation, Node } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { FakeAllocClient } from './client-harness.js';
import { lateBoundClient } from '../../src/agent/late-bound-client.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from './real-server.js';

let sut: ServerUnderTest;
let node: Node;
let allocs: Allocation[];
let evalId = '';

before(async () => {
  sut = await startServer({ client: new FakeAllocClient('n1'), agent: { name: 'a1', httpAddr: '127.0.0.1:4646' } }, { advertiseAddr: '127.0.0.1:4646' });
  ({ node, allocs, evalId } = await placeJob(sut.server, serviceJob('web', 2), mockNode({ HTTPAddr: '127.0.0.1:4646' })));
});

after(() => sut.close());

test('malformed JSON is a 400 naming the problem, whatever the content type', async () => {
  for (const contentType of ['application/json', 'text/plain', undefined]) {
    const res = await sut.app.inject({
      method: 'PUT',
      url: '/v1/jobs',
      payload: '{"Job": {',
      headers: contentType ? { 'content-type': contentType } : {},
    });
    assert.equal(res.statusCode, 400, String(contentType));
    assert.match(res.body, /failed to parse JSON request body/);
  }
});

test('unknown routes are 404, bad query parameters 400, wrong methods 4xx', async () => {
  const nope = await sut.app.inject({ url: '/v1/nope' });
  assert.equal(nope.statusCode, 404);
  assert.equal(nope.body, '404 page not found');
  assert.equal(nope.headers['x-caravan-error-code'], 'HTTP_ROUTE_NOT_FOUND', 'the error code travels beside the text');
  const badIndex = await sut.app.inject({ url: '/v1/jobs?index=abc' });
  assert.equal(badIndex.statusCode, 400);
  assert.equal(badIndex.headers['x-caravan-error-code'], 'HTTP_BAD_REQUEST');
  assert.match(badIndex.body, /"index"/);
  const badWait = await sut.app.inject({ url: '/v1/jobs?index=1&wait=forever' });
  assert.equal(badWait.statusCode, 400);
  assert.match(badWait.body, /"wait"/);
  assert.equal((await sut.app.inject({ method: 'DELETE', url: '/v1/job/x/summary' })).statusCode, 405);
});

test('?pretty indents the JSON', async () => {
  const res = await sut.app.inject({ url: '/v1/nodes?pretty' });
  assert.match(res.body, /^\[\n {4}\{\n {8}"Address"/);
});

test('allocations: list by prefix, full ID required for one, stop', async () => {
  const [a, b] = allocs as [Allocation, Allocation];
  const list = (await sut.app.inject({ url: `/v1/allocations?prefix=${a.ID.slice(0, 8)}` })).json<{ ID: string }[]>();
  assert.ok(list.some((x) => x.ID === a.ID));
  assert.ok(!list.some((x) => x.ID === b.ID) || b.ID.startsWith(a.ID.slice(0, 8)));
  assert.equal((await sut.app.inject({ url: `/v1/allocation/${a.ID.slice(0, 8)}` })).statusCode, 404);
  const one = await sut.app.inject({ url: `/v1/allocation/${a.ID}` });
  assert.equal(one.statusCode, 200);
  assert.equal(one.json<Allocation>().ID, a.ID);
  const stop = await sut.app.inject({ method: 'PUT', url: `/v1/allocation/${b.ID}/stop` });
  assert.equal(stop.statusCode, 200, stop.body);
  const stopEval = stop.json<{ EvalID: string }>().EvalID;
  assert.ok(sut.server.state.evalById(stopEval), 'the stop created a real evaluation');
  assert.equal(sut.server.state.allocById(b.ID)!.DesiredTransition.Migrate, true);
});

test('evaluations: list, one, its allocations', async () => {
  const list = (await sut.app.inject({ url: '/v1/evaluations' })).json<{ ID: string }[]>();
  assert.ok(list.some((e) => e.ID === evalId));
  assert.equal((await sut.app.inject({ url: `/v1/evaluation/${evalId}` })).statusCode, 200);
  assert.equal((await sut.app.inject({ url: '/v1/evaluation/nope' })).body, 'eval not found');
  assert.equal((await sut.app.inject({ url: `/v1/evaluation/${evalId}/allocations` })).json<unknown[]>().length, 2);
});

test('nodes: list stubs, one, allocations, eligibility', async () => {
  const list = (await sut.app.inject({ url: '/v1/nodes' })).json<{ Address: string; ID: string }[]>();
  assert.equal(list[0]!.Address, '127.0.0.1');
  const one = await sut.app.inject({ url: `/v1/node/${node.ID}` });
  assert.equal(one.statusCode, 200);
  assert.equal(one.json<Node>().SecretID, '', 'a node read never carries its SecretID');
  assert.ok(!one.body.includes(node.SecretID));
  assert.equal((await sut.app.inject({ url: `/v1/node/${node.ID}/allocations` })).json<unknown[]>().length, 2);
  const bad = await sut.app.inject({ method: 'PUT', url: `/v1/node/${node.ID}/eligibility`, payload: { Eligibility: 'maybe' } });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /Eligibility/);
  const ok = await sut.app.inject({ method: 'PUT', url: `/v1/node/${node.ID}/eligibility`, payload: { Eligibility: 'ineligible' } });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(sut.server.state.nodeById(node.ID)!.SchedulingEligibility, 'ineligible');
});

test('status, agent and metrics endpoints answer the real addresses', async () => {
  assert.equal((await sut.app.inject({ url: '/v1/status/leader' })).json(), '127.0.0.1:4646');
  assert.deepEqual((await sut.app.inject({ url: '/v1/status/peers' })).json(), ['127.0.0.1:4646']);
  const self = (await sut.app.inject({ url: '/v1/agent/self' })).json<{ member: { Name: string }; stats: { client: { node_id: string } } }>();
  assert.equal(self.member.Name, 'a1.global');
  assert.equal(self.stats.client.node_id, 'n1');
  const health = await sut.app.inject({ url: '/v1/agent/health' });
  assert.deepEqual(health.json(), { client: { ok: true, message: 'ok' }, server: { ok: true, message: 'ok' } });
  const members = (await sut.app.inject({ url: '/v1/agent/members' })).json<{ Members: { Addr: string; Port: number }[] }>();
  assert.equal(members.Members.length, 1);
  assert.equal(members.Members[0]!.Addr, '127.0.0.1');
  assert.equal(members.Members[0]!.Port, 4646);
  const prom = await sut.app.inject({ url: '/v1/metrics?format=prometheus' });
  assert.match(prom.body, /caravan_http_requests_total/);
  assert.match(prom.body, /caravan_state_index/);
  const json = (await sut.app.inject({ url: '/v1/metrics' })).json<{ Gauges: { Name: string }[] }>();
  assert.ok(json.Gauges.some((g) => g.Name === 'caravan.state.index'));
  // A synchronous stretch of the process shows in the next scrape's event-loop delay. (The
  // histogram's first interval after a scrape's reset is not recorded: let it pass.)
  await new Promise((r) => setTimeout(r, 50));
  const blockUntil = Date.now() + 200;
  while (Date.now() < blockUntil) {
    // the event loop is held here, as a long apply would hold it
  }
  await new Promise((r) => setTimeout(r, 30));
  const delay = await sut.app.inject({ url: '/v1/metrics?format=prometheus' });
  const max = Number(/^caravan_runtime_event_loop_delay_seconds\{stat="max"\} (\S+)$/m.exec(delay.body)?.[1]);
  assert.ok(max >= 0.15, `event-loop delay max ${max} s after a 200 ms stretch`);
  assert.match(delay.body, /^caravan_runtime_event_loop_delay_seconds\{stat="p99"\} \S+$/m);
});

test('a client-only agent answers server routes with a clear error, not a crash', async () => {
  const app = createHttpServer({ client: new FakeAllocClient('n1') });
  const res = await app.inject({ url: '/v1/jobs' });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /not a server/);
  assert.equal((await app.inject({ url: '/v1/agent/health' })).statusCode, 200);
  await app.close();
});

test('an agent whose client is still starting is not healthy yet, and /v1/agent/self answers meanwhile', async () => {
  // An agent listens before its client has started; a caller that waited for health must find
  // the whole agent serving (the -dev agent-shutdown test read /v1/agent/self in that window).
  const late = lateBoundClient();
  const app = createHttpServer({ client: late.api, agent: { name: 'a1', region: 'global', datacenter: 'dc1', httpAddr: '127.0.0.1:4646', server: false, client: true, config: { DataDir: '/tmp/x' } } });
  try {
    const starting = await app.inject({ url: '/v1/agent/health' });
    assert.equal(starting.statusCode, 500);
    assert.deepEqual(starting.json(), { client: { ok: false, message: 'the client is still starting' } });
    const self = await app.inject({ url: '/v1/agent/self' });
    assert.equal(self.statusCode, 200);
    assert.equal(self.json<{ config: { DataDir: string } }>().config.DataDir, '/tmp/x');
    late.bind(new FakeAllocClient('n9'));
    assert.equal((await app.inject({ url: '/v1/agent/health' })).statusCode, 200);
    assert.equal((await app.inject({ url: '/v1/agent/self' })).json<{ stats: { client: { node_id: string } } }>().stats.client.node_id, 'n9');
  } finally {
    await app.close();
  }
});

test('tokens are accepted in X-Nomad-Token and Authorization: Bearer', async () => {
  assert.equal((await sut.app.inject({ url: '/v1/jobs', headers: { 'x-nomad-token': 'abc' } })).statusCode, 200);
  assert.equal((await sut.app.inject({ url: '/v1/jobs', headers: { authorization: 'Bearer abc' } })).statusCode, 200);
});
