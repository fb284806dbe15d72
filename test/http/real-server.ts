/**
 * The HTTP tests' server: a real Server (SQLite log in a temporary directory, the real FSM, state
 * store, schedulers and workers) behind the real HTTP layer. State is seeded through the server's
 * own endpoints (registerNode, registerJob, …), so every answer is what a Nomad client would get.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { FastifyInstance } from 'fastify';
import { createHttpServer, type HttpServerOptions } from '../../src/http/http-server.js';
import { Table } from '../../src/server/state/state-reader.js';
import { Server, type ServerConfig } from '../../src/server/server.js';
import type { Allocation, Job, Node } from '../../src/structs/index.js';
import { mockJob, mockNode, mockTaskGroup } from '../mock/factories.js';

/** A running server and its HTTP app; `close` stops both and removes the data dir. */
export interface ServerUnderTest {
  server: Server;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Opens a real server in a fresh temp dir and builds the HTTP app over it. */
export async function startServer(http: Omit<HttpServerOptions, 'server'> = {}, config: Partial<ServerConfig> = {}): Promise<ServerUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-http-test-'));
  const server = await Server.open({ dataDir: dir, numWorkers: 1, ...config });
  const app = createHttpServer({ ...http, server });
  return {
    server,
    app,
    async close() {
      await app.close();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Waits on real state changes (blocking on the tables) until `cond()` holds. */
export async function waitForState(server: Server, cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !cond(); i++) {
    await server.waitForChange([Table.Evals, Table.Allocs, Table.Nodes, Table.Jobs, Table.Deployments], server.state.latestIndex(), 50);
  }
  assert.ok(cond(), `timed out waiting for ${what}`);
}

/** A service job `id` of one group `web` running `count` allocations. */
export function serviceJob(id: string, count = 1, over: Partial<Job> = {}): Job {
  return mockJob({ ID: id, Name: id, TaskGroups: [mockTaskGroup({ Name: 'web', Count: count })], ...over });
}

/**
 * Registers `node` (a mock node unless given), then `job`, and waits until the scheduler placed
 * every allocation of it; answers the node and the allocations.
 */
export async function placeJob(server: Server, job: Job, node: Node = mockNode()): Promise<{ node: Node; allocs: Allocation[]; evalId: string }> {
  if (!server.state.nodeById(node.ID)) await server.registerNode(node);
  const want = job.TaskGroups.reduce((n, g) => n + g.Count, 0);
  const res = await server.registerJob(job);
  await waitForState(server, () => server.state.evalById(res.evalId)?.Status === 'complete', `eval of ${job.ID}`);
  const allocs = server.state.allocsByJob(job.Namespace, job.ID);
  assert.equal(allocs.length, want, `placed allocations of ${job.ID}`);
  return { node: server.state.nodeById(node.ID)!, allocs, evalId: res.evalId };
}

/**
 * Places a one-allocation job `jobId` on node `nodeId`, whose client answers at `httpAddr`, and
 * answers the allocation's ID (the server forwards client routes for it to that address).
 */
export async function allocOnNode(server: Server, nodeId: string, httpAddr: string, jobId = 'fwd'): Promise<string> {
  const { allocs } = await placeJob(server, serviceJob(jobId, 1), mockNode({ ID: nodeId, HTTPAddr: httpAddr }));
  return allocs[0]!.ID;
}
