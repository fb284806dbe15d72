/**
 * Server-side paging of the lists the UI and CLI page through, with Nomad's orders and tokens:
 * /v1/jobs by namespace and ID ("default.web"), /v1/allocations, /v1/evaluations and
 * /v1/deployments by create index and ID ("1234.<uuid>"), /v1/nodes by ID; pages walked with
 * X-Nomad-NextToken cover every item once, and a token of the wrong form is a 400 naming it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mockNode } from '../mock/factories.js';
import { placeJob, serviceJob, startServer, type ServerUnderTest } from './real-server.js';

let sut: ServerUnderTest;

before(async () => {
  sut = await startServer({ random: () => 0 });
  for (let i = 0; i < 4; i++) await sut.server.registerNode(mockNode());
  for (const id of ['web', 'api', 'db']) await placeJob(sut.server, serviceJob(id, 2));
});

after(async () => {
  await sut.close();
});

/** Walks every page of `url` at `perPage`; answers the items in order and the tokens seen. */
async function walk(url: string, perPage: number): Promise<{ items: Record<string, unknown>[]; tokens: string[] }> {
  const items: Record<string, unknown>[] = [];
  const tokens: string[] = [];
  let token = '';
  for (let i = 0; i < 100; i++) {
    const sep = url.includes('?') ? '&' : '?';
    const res = await sut.app.inject({ url: `${url}${sep}per_page=${perPage}${token ? `&next_token=${encodeURIComponent(token)}` : ''}` });
    assert.equal(res.statusCode, 200, res.body);
    const page = res.json<Record<string, unknown>[]>();
    assert.ok(page.length <= perPage);
    items.push(...page);
    token = String(res.headers['x-nomad-nexttoken'] ?? '');
    if (!token) return { items, tokens };
    tokens.push(token);
  }
  assert.fail(`${url} never ran out of pages`);
}

const byCreate = (a: Record<string, unknown>, b: Record<string, unknown>): number =>
  Number(a['CreateIndex']) - Number(b['CreateIndex']) || String(a['ID']).localeCompare(String(b['ID']));

test('/v1/jobs pages by namespace and ID with "namespace.ID" tokens', async () => {
  const { items, tokens } = await walk('/v1/jobs', 2);
  assert.deepEqual(items.map((j) => j['ID']), ['api', 'db', 'web']);
  assert.deepEqual(tokens, ['default.web']);
});

test('/v1/allocations, /v1/evaluations and /v1/deployments page by create index and ID with "CreateIndex.ID" tokens', async () => {
  for (const [url, total] of [['/v1/allocations', 6], ['/v1/evaluations', 3], ['/v1/deployments', sut.server.state.deployments().length]] as const) {
    const all = (await sut.app.inject({ url })).json<Record<string, unknown>[]>();
    assert.equal(all.length, total, url);
    const { items, tokens } = await walk(url, 2);
    assert.deepEqual(items.map((x) => x['ID']), [...all].sort(byCreate).map((x) => x['ID']), `${url}: every item once, by create index`);
    for (const t of tokens) assert.match(t, /^\d+\.[0-9a-f-]{36}$/, url);
    const next = items[2];
    if (next) assert.equal(tokens[0], `${String(next['CreateIndex'])}.${String(next['ID'])}`);
  }
  // Reversed: newest first, tokens still resume.
  const rev = await walk('/v1/allocations?reverse=true', 4);
  assert.deepEqual(rev.items.map((x) => x['ID']), (await walk('/v1/allocations', 4)).items.map((x) => x['ID']).reverse());
});

test('/v1/nodes pages by ID; a filter applies before paging; a malformed token is a 400 naming next_token', async () => {
  const { items, tokens } = await walk('/v1/nodes', 3);
  const ids = sut.server.state.nodes().map((n) => n.ID).sort();
  assert.deepEqual(items.map((n) => n['ID']), ids);
  assert.deepEqual(tokens, ids.filter((_, i) => i > 0 && i % 3 === 0), 'each token is the ID of the next page\'s first node');
  const filtered = await walk(`/v1/allocations?filter=${encodeURIComponent('JobID == "web"')}`, 1);
  assert.deepEqual(filtered.items.map((a) => a['JobID']), ['web', 'web']);
  const bad = await sut.app.inject({ url: '/v1/evaluations?per_page=1&next_token=not-a-token' });
  assert.equal(bad.statusCode, 400);
  assert.match(bad.body, /next_token/);
});

test('/v1/job/:id/allocations pages by ID and filters on the stored allocation, not its stub', async () => {
  const all = (await sut.app.inject({ url: '/v1/job/web/allocations' })).json<Record<string, unknown>[]>();
  assert.equal(all.length, 2);
  const { items, tokens } = await walk('/v1/job/web/allocations', 1);
  const ids = all.map((a) => String(a['ID'])).sort();
  assert.deepEqual(items.map((a) => a['ID']), ids);
  assert.deepEqual(tokens, [ids[1]]);
  // A stub has no Job; the stored allocation does (as /v1/allocations filters).
  const byJob = await walk(`/v1/job/web/allocations?filter=${encodeURIComponent('Job.ID == "web"')}`, 1);
  assert.deepEqual(byJob.items.map((a) => a['ID']), ids);
  assert.ok(byJob.items.every((a) => a['Job'] === undefined), 'answered as stubs');
});
