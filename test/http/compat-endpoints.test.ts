import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/http/http-server.js';
import { isLocalRoute } from '../../src/http/forward-to-server/server-proxy.js';
import { jobScaleStatus } from '../../src/http/api-views/job-scale-status.js';
import { Table } from '../../src/server/state/state-reader.js';
import { Server } from '../../src/server/server.js';
import { mockAlloc, mockJob, mockNode } from '../mock/factories.js';

describe('endpoints the nomad CLI calls routinely', () => {
  let dir = '';
  let server: Server;
  let app: FastifyInstance;
  let nodeId = '';
  let allocId = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'caravan-compat-ep-'));
    server = await Server.open({ dataDir: dir, numWorkers: 1 });
    app = createHttpServer({ server, agent: { name: 'srv1', region: 'global' } });
    const node = mockNode({ Name: 'worker-one' });
    nodeId = node.ID;
    await server.registerNode(node);
    const reg = await server.registerJob(mockJob({ ID: 'webapp', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Name: 'frontend', Count: 2 }] }));
    await server.upsertNamespace({ Name: 'team-a' });
    await server.registerJob(mockJob({ ID: 'other', Namespace: 'team-a', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 1 }] }));
    for (let i = 0; i < 200 && server.state.evalById(reg.evalId)?.Status !== 'complete'; i++) {
      await server.waitForChange([Table.Evals], server.state.latestIndex(), 50);
    }
    allocId = server.state.allocsByJob('default', 'webapp')[0]!.ID;
  });

  after(async () => {
    await app.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const put = (url: string, payload: object) => app.inject({ method: 'PUT', url, payload });

  it('prefix search answers every context for "all" and only the asked one otherwise', async () => {
    const all = (await put('/v1/search', { Prefix: 'web', Context: 'all' })).json<{ Matches: Record<string, string[]>; Truncations: Record<string, boolean> }>();
    assert.deepEqual(all.Matches['jobs'], ['webapp']);
    assert.deepEqual(all.Matches['allocs'], []);
    assert.equal(all.Truncations['jobs'], false);
    for (const ctx of ['allocs', 'deployment', 'evals', 'jobs', 'nodes', 'plugins', 'volumes']) assert.ok(ctx in all.Matches, ctx);

    const byAlloc = (await put('/v1/search', { Prefix: allocId.slice(0, 6), Context: 'allocs' })).json<{ Matches: Record<string, string[]> }>();
    assert.deepEqual(Object.keys(byAlloc.Matches), ['allocs']);
    assert.ok(byAlloc.Matches['allocs']!.includes(allocId));

    const node = (await put('/v1/search', { Prefix: nodeId.slice(0, 8), Context: 'nodes' })).json<{ Matches: Record<string, string[]> }>();
    assert.deepEqual(node.Matches['nodes'], [nodeId]);

    // Jobs are namespaced: ?namespace= picks the namespace, "*" searches all.
    const other = (await put('/v1/search', { Prefix: 'oth', Context: 'jobs' })).json<{ Matches: Record<string, string[]> }>();
    assert.deepEqual(other.Matches['jobs'], []);
    const everywhere = (await put('/v1/search?namespace=*', { Prefix: 'oth', Context: 'jobs' })).json<{ Matches: Record<string, string[]> }>();
    assert.deepEqual(everywhere.Matches['jobs'], ['other']);
  });

  it('fuzzy search finds jobs, groups, nodes and allocations by name with their scopes', async () => {
    const res = (await put('/v1/search/fuzzy', { Text: 'front', Context: 'all' })).json<{ Matches: Record<string, { ID: string; Scope: string[] }[]> }>();
    assert.deepEqual(res.Matches['groups'], [{ ID: 'frontend', Scope: ['default', 'webapp'] }]);
    const jobs = (await put('/v1/search/fuzzy', { Text: 'APP', Context: 'jobs' })).json<{ Matches: Record<string, { ID: string; Scope: string[] }[]> }>();
    assert.deepEqual(jobs.Matches['jobs'], [{ ID: 'webapp', Scope: ['default'] }]);
    const nodes = (await put('/v1/search/fuzzy', { Text: 'worker', Context: 'nodes' })).json<{ Matches: Record<string, { ID: string; Scope: string[] }[]> }>();
    assert.deepEqual(nodes.Matches['nodes'], [{ ID: 'worker-one', Scope: [nodeId] }]);
    const allocs = (await put('/v1/search/fuzzy', { Text: 'webapp.frontend', Context: 'allocs' })).json<{ Matches: Record<string, { ID: string }[]> }>();
    assert.equal(allocs.Matches['allocs']!.length, 2);
  });

  it('search rejects bad input naming the field', async () => {
    const rows = [
      { name: 'bad context', url: '/v1/search', payload: { Prefix: 'a', Context: 'bogus' }, want: /"Context"/ },
      { name: 'short fuzzy text', url: '/v1/search/fuzzy', payload: { Text: 'a', Context: 'all' }, want: /"Text".*at least 2/ },
      { name: 'non-string prefix', url: '/v1/search', payload: { Prefix: 7, Context: 'all' }, want: /Prefix/ },
    ];
    for (const r of rows) {
      const res = await put(r.url, r.payload);
      assert.equal(res.statusCode, 400, r.name);
      assert.match(res.body, r.want, r.name);
    }
  });

  it('regions, namespaces, raft configuration and agent servers', async () => {
    assert.deepEqual((await app.inject({ url: '/v1/regions' })).json(), ['global']);
    const names = (await app.inject({ url: '/v1/namespaces' })).json<{ Name: string }[]>().map((n) => n.Name);
    assert.deepEqual(names, ['default', 'team-a']);
    assert.equal((await app.inject({ url: '/v1/namespace/default' })).json<{ Description: string }>().Description, 'Default shared namespace');
    assert.equal((await app.inject({ url: '/v1/namespace/nope' })).statusCode, 404);
    const raft = (await app.inject({ url: '/v1/operator/raft/configuration' })).json<{ Servers: { Leader: boolean; Voter: boolean; Address: string }[] }>();
    assert.deepEqual(raft.Servers.map((s) => [s.Address, s.Leader, s.Voter]), [[server.leaderAddress(), true, true]]);
    // A server-only agent has no client, hence no servers list (as Nomad).
    assert.equal((await app.inject({ url: '/v1/agent/servers' })).statusCode, 501);
    assert.equal(isLocalRoute('/v1/agent/servers'), true);
  });

  it('job scale status counts live, non-canary allocations per group', async () => {
    const res = await app.inject({ url: '/v1/job/webapp/scale' });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<{ JobID: string; TaskGroups: Record<string, { Desired: number; Placed: number }> }>();
    assert.equal(body.JobID, 'webapp');
    assert.deepEqual(
      { Desired: body.TaskGroups['frontend']!.Desired, Placed: body.TaskGroups['frontend']!.Placed },
      { Desired: 2, Placed: 2 },
    );
    assert.equal((await app.inject({ url: '/v1/job/nope/scale' })).statusCode, 404);

    const job = mockJob({ ID: 'j' });
    const node = mockNode();
    const tg = job.TaskGroups[0]!.Name;
    const status = jobScaleStatus(job, [
      mockAlloc(job, node, { ClientStatus: 'running', DeploymentStatus: { Healthy: true, Timestamp: '2024-01-01T00:00:00Z', Canary: false, ModifyIndex: 1 } }),
      mockAlloc(job, node, { ClientStatus: 'pending', DeploymentStatus: { Healthy: false, Timestamp: '2024-01-01T00:00:00Z', Canary: false, ModifyIndex: 1 } }),
      mockAlloc(job, node, { ClientStatus: 'running', DeploymentStatus: { Healthy: null, Timestamp: '2024-01-01T00:00:00Z', Canary: true, ModifyIndex: 1 } }),
      mockAlloc(job, node, { ClientStatus: 'complete' }),
      mockAlloc(job, node, { DesiredStatus: 'stop' }),
    ]);
    assert.deepEqual(status.TaskGroups[tg], { Desired: job.TaskGroups[0]!.Count, Placed: 2, Running: 1, Healthy: 1, Unhealthy: 1, Events: null });
  });
});
