import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpServer } from '../../src/http/http-server.js';
import { FakeServerApi, fakeClient, mockAlloc, mockEval, mockNode } from './fake-server-api.js';

test('malformed JSON is a 400 naming the problem, whatever the content type', async () => {
  const app = createHttpServer({ server: new FakeServerApi() });
  for (const contentType of ['application/json', 'text/plain', undefined]) {
    const res = await app.inject({
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
  const app = createHttpServer({ server: new FakeServerApi() });
  assert.equal((await app.inject({ url: '/v1/nope' })).statusCode, 404);
  const badIndex = await app.inject({ url: '/v1/jobs?index=abc' });
  assert.equal(badIndex.statusCode, 400);
  assert.match(badIndex.body, /"index"/);
  const badWait = await app.inject({ url: '/v1/jobs?index=1&wait=forever' });
  assert.equal(badWait.statusCode, 400);
  assert.match(badWait.body, /"wait"/);
  assert.equal((await app.inject({ method: 'DELETE', url: '/v1/job/x/summary' })).statusCode, 405);
});

test('?pretty indents the JSON', async () => {
  const server = new FakeServerApi();
  server.putNode(mockNode());
  const app = createHttpServer({ server });
  const res = await app.inject({ url: '/v1/nodes?pretty' });
  assert.match(res.body, /^\[\n {4}\{\n {8}"Address"/);
});

test('allocations: list by prefix, full ID required for one, stop', async () => {
  const server = new FakeServerApi();
  server.putAlloc(mockAlloc());
  server.putAlloc(mockAlloc({ ID: 'bbbbbbbb-0000-0000-0000-000000000002' }));
  const app = createHttpServer({ server });
  assert.equal((await app.inject({ url: '/v1/allocations?prefix=aaaa' })).json<unknown[]>().length, 1);
  assert.equal((await app.inject({ url: '/v1/allocation/aaaaaaaa' })).statusCode, 404);
  const one = await app.inject({ url: '/v1/allocation/aaaaaaaa-0000-0000-0000-000000000001' });
  assert.equal(one.statusCode, 200);
  const stop = await app.inject({ method: 'PUT', url: '/v1/allocation/aaaaaaaa-0000-0000-0000-000000000001/stop' });
  assert.equal(stop.statusCode, 200, stop.body);
  assert.ok(stop.json<{ EvalID: string }>().EvalID);
});

test('evaluations: list, one, its allocations', async () => {
  const server = new FakeServerApi();
  server.putEval(mockEval());
  server.putAlloc(mockAlloc());
  const app = createHttpServer({ server });
  assert.equal((await app.inject({ url: '/v1/evaluations' })).json<unknown[]>().length, 1);
  assert.equal((await app.inject({ url: '/v1/evaluation/eeeeeeee-0000-0000-0000-000000000001' })).statusCode, 200);
  assert.equal((await app.inject({ url: '/v1/evaluation/nope' })).body, 'eval not found');
  assert.equal((await app.inject({ url: '/v1/evaluation/eeeeeeee-0000-0000-0000-000000000001/allocations' })).json<unknown[]>().length, 1);
});

test('nodes: list stubs, one, allocations, eligibility', async () => {
  const server = new FakeServerApi();
  const node = mockNode();
  server.putNode(node);
  server.putAlloc(mockAlloc());
  const app = createHttpServer({ server });
  const list = (await app.inject({ url: '/v1/nodes' })).json<{ Address: string; ID: string }[]>();
  assert.equal(list[0]!.Address, '127.0.0.1');
  assert.equal((await app.inject({ url: `/v1/node/${node.ID}` })).statusCode, 200);
  assert.equal((await app.inject({ url: `/v1/node/${node.ID}/allocations` })).json<unknown[]>().length, 1);
  const bad = await app.inject({ method: 'PUT', url: `/v1/node/${node.ID}/eligibility`, payload: { Eligibility: 'maybe' } });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /Eligibility/);
  const ok = await app.inject({ method: 'PUT', url: `/v1/node/${node.ID}/eligibility`, payload: { Eligibility: 'ineligible' } });
  assert.equal(ok.statusCode, 200, ok.body);
  assert.equal(server.nodesById.get(node.ID)!.SchedulingEligibility, 'ineligible');
});

test('status, agent and metrics endpoints', async () => {
  const server = new FakeServerApi();
  const app = createHttpServer({ server, client: fakeClient('n1'), agent: { name: 'a1' } });
  assert.equal((await app.inject({ url: '/v1/status/leader' })).json(), '127.0.0.1:4647');
  assert.deepEqual((await app.inject({ url: '/v1/status/peers' })).json(), ['127.0.0.1:4647']);
  const self = (await app.inject({ url: '/v1/agent/self' })).json<{ member: { Name: string }; stats: { client: { node_id: string } } }>();
  assert.equal(self.member.Name, 'a1.global');
  assert.equal(self.stats.client.node_id, 'n1');
  const health = await app.inject({ url: '/v1/agent/health' });
  assert.deepEqual(health.json(), { client: { ok: true, message: 'ok' }, server: { ok: true, message: 'ok' } });
  const members = (await app.inject({ url: '/v1/agent/members' })).json<{ Members: unknown[] }>();
  assert.equal(members.Members.length, 1);
  const prom = await app.inject({ url: '/v1/metrics?format=prometheus' });
  assert.match(prom.body, /caravan_http_requests_total/);
  assert.match(prom.body, /caravan_state_index/);
  const json = (await app.inject({ url: '/v1/metrics' })).json<{ Gauges: { Name: string }[] }>();
  assert.ok(json.Gauges.some((g) => g.Name === 'caravan.state.index'));
});

test('a client-only agent answers server routes with a clear error, not a crash', async () => {
  const app = createHttpServer({ client: fakeClient('n1') });
  const res = await app.inject({ url: '/v1/jobs' });
  assert.equal(res.statusCode, 400);
  assert.match(res.body, /not a server/);
  assert.equal((await app.inject({ url: '/v1/agent/health' })).statusCode, 200);
});

test('tokens are accepted in X-Nomad-Token and Authorization: Bearer', async () => {
  const app = createHttpServer({ server: new FakeServerApi() });
  assert.equal((await app.inject({ url: '/v1/jobs', headers: { 'x-nomad-token': 'abc' } })).statusCode, 200);
  assert.equal((await app.inject({ url: '/v1/jobs', headers: { authorization: 'Bearer abc' } })).statusCode, 200);
});
