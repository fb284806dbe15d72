import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createHttpServer } from '../../src/http/http-server.js';
import { Table } from '../../src/server/state/state-reader.js';
import { Server } from '../../src/server/server.js';
import { newTaskEvent, newTaskState } from '../../src/client/taskrunner/task-event.js';
import type { Node } from '../../src/structs/node.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { goShapeErrors, type GoType } from './compat-go-shape.js';
import * as G from './compat-schemas.js';

/** A job with the blocks whose API shape differs most from HCL: network ports, a service, a template, an artifact. */
const RICH_JOB_HCL = `
job "rich" {
  datacenters = ["dc1"]
  group "g" {
    count = 1
    network {
      port "http" {
        static = 8080
      }
    }
    service {
      name = "rich"
      port = "http"
      meta {
        team = "a"
      }
      check {
        type     = "http"
        path     = "/"
        interval = "10s"
        timeout  = "2s"
      }
    }
    task "t" {
      driver = "mock_driver"
      config {
        run_for = "1h"
      }
      template {
        data        = "x"
        destination = "local/x"
        splay       = "5s"
        wait {
          min = "1s"
          max = "2s"
        }
      }
      artifact {
        source = "https://example.com/x.tgz"
        options {
          checksum = "md5:d41d8cd98f00b204e9800998ecf8427e"
        }
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

describe('compatibility with the Go api structs the nomad CLI decodes', () => {
  let dir = '';
  let server: Server;
  let app: FastifyInstance;
  let node: Node;
  let drained: Node;
  let allocId = '';
  let evalId = '';

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'caravan-compat-'));
    server = await Server.open({ dataDir: dir, numWorkers: 1 });
    app = createHttpServer({ server, agent: { name: 'srv1' } });
    node = mockNode();
    drained = mockNode();
    await server.registerNode(node);
    await server.registerNode(drained);
    const reg = await server.registerJob(mockJob({ ID: 'web', TaskGroups: [{ ...mockJob().TaskGroups[0]!, Count: 2 }] }));
    evalId = reg.evalId;
    for (let i = 0; i < 200 && server.state.evalById(evalId)?.Status !== 'complete'; i++) {
      await server.waitForChange([Table.Evals], server.state.latestIndex(), 50);
    }
    const alloc = server.state.allocsByJob('default', 'web')[0]!;
    allocId = alloc.ID;
    const st = newTaskState();
    st.State = 'running';
    st.StartedAt = '2024-01-02T03:04:05.123Z';
    st.Events = [newTaskEvent('Received', 1_700_000_000_000), newTaskEvent('Started', 1_700_000_001_000)];
    await server.updateAllocsFromClient([{ ID: alloc.ID, NodeID: alloc.NodeID, ClientStatus: 'running', ClientDescription: '', TaskStates: { web: st } }], server.state.nodeById(alloc.NodeID)!.SecretID);
    await server.updateNodeDrain(drained.ID, { DrainSpec: { Deadline: 3_600_000_000_000, IgnoreSystemJobs: false }, MarkEligible: false, Meta: {} });
  });

  after(async () => {
    await app.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const assertShape = (name: string, body: unknown, schema: GoType) => {
    const errors = goShapeErrors(body, schema);
    assert.deepEqual(errors, [], `${name} would not decode:\n${errors.join('\n')}`);
  };

  it('every read decodes into its Go struct and carries X-Nomad-Index', async () => {
    const rows: { name: string; url: string; schema: GoType; index?: boolean }[] = [
      { name: 'jobs', url: '/v1/jobs', schema: { slice: G.JobListStub }, index: true },
      { name: 'job', url: '/v1/job/web', schema: G.Job, index: true },
      { name: 'job summary', url: '/v1/job/web/summary', schema: G.JobSummary, index: true },
      { name: 'job allocations', url: '/v1/job/web/allocations', schema: { slice: G.AllocListStub }, index: true },
      { name: 'job evaluations', url: '/v1/job/web/evaluations', schema: { slice: G.Evaluation }, index: true },
      { name: 'job versions', url: '/v1/job/web/versions', schema: G.JobVersionsResponse, index: true },
      { name: 'job versions with diffs', url: '/v1/job/web/versions?diffs=true', schema: G.JobVersionsResponse, index: true },
      { name: 'job deployments', url: '/v1/job/web/deployments', schema: { slice: { struct: { ID: 'string', Status: 'string' } } }, index: true },
      { name: 'job scale', url: '/v1/job/web/scale', schema: G.JobScaleStatusResponse, index: true },
      { name: 'allocations', url: '/v1/allocations', schema: { slice: G.AllocListStub }, index: true },
      { name: 'allocation', url: `/v1/allocation/${allocId}`, schema: G.Allocation, index: true },
      { name: 'evaluations', url: '/v1/evaluations', schema: { slice: G.Evaluation }, index: true },
      { name: 'evaluation', url: `/v1/evaluation/${evalId}`, schema: G.Evaluation, index: true },
      { name: 'evaluation allocations', url: `/v1/evaluation/${evalId}/allocations`, schema: { slice: G.AllocListStub }, index: true },
      { name: 'nodes', url: '/v1/nodes', schema: { slice: G.NodeListStub }, index: true },
      { name: 'nodes ?os', url: '/v1/nodes?os=true', schema: { slice: G.NodeListStub }, index: true },
      { name: 'node', url: `/v1/node/${node.ID}`, schema: G.Node, index: true },
      { name: 'draining node', url: `/v1/node/${drained.ID}`, schema: G.Node, index: true },
      { name: 'node allocations', url: `/v1/node/${node.ID}/allocations`, schema: { slice: G.Allocation }, index: true },
      { name: 'agent self', url: '/v1/agent/self', schema: G.AgentSelf },
      { name: 'agent members', url: '/v1/agent/members', schema: G.ServerMembers },
      { name: 'agent health', url: '/v1/agent/health', schema: G.AgentHealthResponse },
      { name: 'status leader', url: '/v1/status/leader', schema: G.StringValue },
      { name: 'status peers', url: '/v1/status/peers', schema: G.StringSlice },
      { name: 'regions', url: '/v1/regions', schema: G.StringSlice },
      { name: 'namespaces', url: '/v1/namespaces', schema: { slice: G.Namespace }, index: true },
      { name: 'namespace', url: '/v1/namespace/default', schema: G.Namespace, index: true },
      { name: 'raft configuration', url: '/v1/operator/raft/configuration', schema: G.RaftConfiguration, index: true },
      { name: 'metrics', url: '/v1/metrics', schema: G.MetricsSummary },
    ];
    for (const row of rows) {
      const res = await app.inject({ method: 'GET', url: row.url });
      assert.equal(res.statusCode, 200, `${row.name}: ${res.body}`);
      assertShape(row.name, res.json(), row.schema);
      if (row.index) assert.match(String(res.headers['x-nomad-index']), /^[1-9]\d*$/, `${row.name}: X-Nomad-Index`);
    }
  });

  it('task states, drain strategies and node events carry RFC 3339 times where Go has time.Time', async () => {
    const alloc = (await app.inject({ method: 'GET', url: `/v1/allocation/${allocId}` })).json<{ TaskStates: Record<string, { StartedAt: string; Events: { Time: number }[] }> }>();
    assert.equal(alloc.TaskStates['web']!.StartedAt, '2024-01-02T03:04:05.123Z');
    assert.equal(alloc.TaskStates['web']!.Events.length, 2);
    const n = (await app.inject({ method: 'GET', url: `/v1/node/${drained.ID}` })).json<{ DrainStrategy: { ForceDeadline: string }; LastDrain: { Status: string } }>();
    assert.notEqual(n.DrainStrategy, null);
    assert.equal(n.LastDrain.Status, 'draining');
  });

  it('writes answer the Go response structs', async () => {
    const job = (await app.inject({ method: 'GET', url: '/v1/job/web' })).json<Record<string, unknown>>();
    const rows: { name: string; method: 'PUT' | 'POST' | 'DELETE'; url: string; payload?: object; schema: GoType }[] = [
      { name: 'register', method: 'PUT', url: '/v1/jobs', payload: { Job: { ...job, Meta: { v: '2' } } }, schema: G.JobRegisterResponse },
      { name: 'plan', method: 'PUT', url: '/v1/job/web/plan', payload: { Job: job, Diff: true }, schema: G.JobPlanResponse },
      { name: 'evaluate', method: 'PUT', url: '/v1/job/web/evaluate', payload: {}, schema: G.JobRegisterResponse },
      { name: 'eligibility', method: 'PUT', url: `/v1/node/${node.ID}/eligibility`, payload: { Eligibility: 'eligible' }, schema: G.NodeEligibilityUpdateResponse },
      { name: 'prefix search', method: 'PUT', url: '/v1/search', payload: { Prefix: 'w', Context: 'all' }, schema: G.SearchResponse },
      { name: 'fuzzy search', method: 'PUT', url: '/v1/search/fuzzy', payload: { Text: 'we', Context: 'all' }, schema: G.FuzzySearchResponse },
      { name: 'alloc stop', method: 'PUT', url: `/v1/allocation/${allocId}/stop`, payload: {}, schema: G.AllocStopResponse },
      { name: 'deregister', method: 'DELETE', url: '/v1/job/web', schema: G.JobDeregisterResponse },
    ];
    for (const row of rows) {
      const res = await app.inject({ method: row.method, url: row.url, ...(row.payload ? { payload: row.payload } : {}) });
      assert.equal(res.statusCode, 200, `${row.name}: ${res.body}`);
      assertShape(row.name, res.json(), row.schema);
      assert.match(String(res.headers['x-nomad-index']), /^[1-9]\d*$/, `${row.name}: X-Nomad-Index`);
    }
  });

  it('a job from HCL with a service, template and artifact reads back as Go api.Job', async () => {
    const parsed = await app.inject({ method: 'POST', url: '/v1/jobs/parse', payload: { JobHCL: RICH_JOB_HCL, Canonicalize: true } });
    assert.equal(parsed.statusCode, 200, parsed.body);
    assertShape('parsed job', parsed.json(), G.Job);
    const reg = await app.inject({ method: 'PUT', url: '/v1/jobs', payload: { Job: parsed.json() } });
    assert.equal(reg.statusCode, 200, reg.body);
    assertShape('rich job', (await app.inject({ method: 'GET', url: '/v1/job/rich' })).json(), G.Job);
  });

  it('answers the fields Nomad always sends: reserved resources, maps, zero times (issue 27)', async () => {
    // A node registered without ReservedResources (an older client's) reads as Nomad's: zeros.
    const bare = { ...mockNode(), ReservedResources: null, Links: null };
    await server.registerNode(bare);
    const nothingReserved = { Cpu: { CpuShares: 0, ReservedCpuCores: null }, Memory: { MemoryMB: 0 }, Disk: { DiskMB: 0 }, Networks: { ReservedHostPorts: '' } };
    for (const [id, reserved] of [[node.ID, node.ReservedResources], [bare.ID, nothingReserved]] as const) {
      const n = (await app.inject({ method: 'GET', url: `/v1/node/${id}` })).json<Record<string, unknown>>();
      assert.deepEqual(n['ReservedResources'], reserved, `node ${id}`);
      assert.deepEqual([n['Links'], n['CSIControllerPlugins'], n['CSINodePlugins']], [node.Links ?? {}, {}, {}]);
      assert.equal((n['Reserved'] as { CPU: number }).CPU, reserved!.Cpu.CpuShares);
    }
    const stubs = (await app.inject({ method: 'GET', url: '/v1/nodes?resources=true' })).json<{ ReservedResources: unknown }[]>();
    assert.ok(stubs.every((s) => s.ReservedResources !== null && s.ReservedResources !== undefined));

    // A task never restarted nor finished, an evaluation that waits for nothing: Go's zero time.
    const zero = '0001-01-01T00:00:00Z';
    type Times = { TaskStates: Record<string, { StartedAt: string; FinishedAt: string; LastRestart: string }> };
    const full = (await app.inject({ method: 'GET', url: `/v1/allocation/${allocId}` })).json<Times>();
    const [stub] = (await app.inject({ method: 'GET', url: '/v1/job/web/allocations' })).json<Times[]>().filter((a) => a.TaskStates);
    for (const st of [full.TaskStates['web']!, stub!.TaskStates['web']!]) {
      assert.deepEqual([st.StartedAt, st.FinishedAt, st.LastRestart], ['2024-01-02T03:04:05.123Z', zero, zero]);
    }
    const ev = (await app.inject({ method: 'GET', url: `/v1/evaluation/${evalId}` })).json<{ WaitUntil: string }>();
    assert.equal(ev.WaitUntil, zero);
    const evs = (await app.inject({ method: 'GET', url: '/v1/evaluations' })).json<{ WaitUntil: string }[]>();
    assert.ok(evs.every((e) => e.WaitUntil === zero || !Number.isNaN(Date.parse(e.WaitUntil))));

    // A stored job carries the scalars nomad/structs holds as values.
    const job = (await app.inject({ method: 'GET', url: '/v1/job/rich' })).json<Record<string, unknown>>();
    assert.deepEqual([job['ConsulNamespace'], job['VaultNamespace'], job['NomadTokenID']], ['', '', '']);
    const res = (job['TaskGroups'] as { Tasks: { Resources: Record<string, unknown> }[] }[])[0]!.Tasks[0]!.Resources;
    assert.deepEqual([res['IOPS'], res['SecretsMB']], [0, 0]);
  });
});
