/**
 * What a client's allocation watch transfers when one allocation of many changes: a real client
 * (mock driver, in this process, over HTTP with a fetch that counts the allocations in every
 * answer) runs 50 allocations of a service job on a real server; one is stopped (and replaced).
 * As Nomad's client, it must receive only the allocations that changed — not the node's whole
 * list with every job on each change, which cost O(K²) for K allocations on a node.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { api, startAgent } from './helpers/agent-process.js';
import { Client } from '../../src/client/client.js';
import { httpServerConnection } from '../../src/client/server-connection.js';
import { MemoryStateDb } from '../../src/client/state/state-db.js';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.js';
import { simulatedNode } from '../../bench/nodesim/simulated-node.js';

const COUNT = 50;

/** Allocation objects (ID, TaskGroup, AllocModifyIndex) anywhere in a JSON answer. */
function countAllocs(v: unknown): number {
  if (Array.isArray(v)) return v.reduce((n: number, x) => n + countAllocs(x), 0);
  if (v === null || typeof v !== 'object') return 0;
  const o = v as Record<string, unknown>;
  if (typeof o['ID'] === 'string' && typeof o['TaskGroup'] === 'string' && typeof o['AllocModifyIndex'] === 'number') return 1;
  return Object.values(o).reduce((n: number, x) => n + countAllocs(x), 0);
}

async function until(what: string, probe: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('one allocation of 50 changing sends the client that allocation, not the node’s whole list', async (t) => {
  const server = await startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-log-level', 'warn'], readyTimeoutMs: 60_000 });
  const root = mkdtempSync(join(tmpdir(), 'caravan-alloc-watch-'));
  const received = { allocs: 0, bytes: 0 };
  const counting: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    const text = await res.text();
    received.bytes += Buffer.byteLength(text);
    try {
      received.allocs += countAllocs(JSON.parse(text));
    } catch {
      // not JSON: no allocations in it
    }
    return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
  let client: Client | null = null;
  try {
    const node = simulatedNode(0);
    client = await Client.start({
      dataDir: root,
      connection: httpServerConnection([server.address.replace('http://', '')], undefined, undefined, counting),
      nodeName: node.name,
      datacenter: node.datacenter,
      nodePool: node.nodePool,
      meta: node.meta,
      httpAddr: node.httpAddr,
      identity: node.identity,
      host: node.host,
      drivers: [createMockDriver()],
      store: new MemoryStateDb(),
      allocDirsOnDisk: false,
      logger: pino({ level: 'silent' }),
    });
    const job = {
      Job: {
        ID: 'many',
        Name: 'many',
        Type: 'service',
        Datacenters: [node.datacenter],
        TaskGroups: [{ Name: 'g', Count: COUNT, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1h' }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
      },
    };
    assert.equal((await api(server.address, 'PUT', '/v1/jobs', job)).status, 200);
    const running = async (n: number): Promise<boolean> => {
      const s = (await api<{ Summary: { g: { Running: number; Complete: number } } }>(server.address, 'GET', '/v1/job/many/summary')).body;
      return s.Summary.g.Running === COUNT && s.Summary.g.Complete === n;
    };
    await until(`${COUNT} allocations running`, () => running(0));
    const c = client;
    await until('the client running them all', async () => c.allocRunners().filter((ar) => ar.clientUpdate().ClientStatus === 'running').length === COUNT);
    t.diagnostic(`placing: ${received.allocs} allocations, ${received.bytes} bytes`);
    // Placing 50 allocations one batch at a time is where the old watch sent K² allocations.
    const placing = { ...received };

    received.allocs = 0;
    received.bytes = 0;
    const allocs = (await api<{ ID: string }[]>(server.address, 'GET', '/v1/job/many/allocations')).body;
    assert.equal((await api(server.address, 'PUT', `/v1/allocation/${allocs[0]!.ID}/stop`, {})).status, 200);
    // Stopped, reported complete, replaced, the replacement running: every change reached the client.
    await until('the stopped allocation replaced and running', () => running(1));
    await until('the client running the replacement', async () => c.allocRunners().filter((ar) => ar.clientUpdate().ClientStatus === 'running').length === COUNT);

    t.diagnostic(`one stopped: ${received.allocs} allocations, ${received.bytes} bytes`);
    // The stopped allocation and its replacement, each fetched once per change of it (stop,
    // complete; placed, running): a handful, where the old watch sent all 50 on every change.
    assert.ok(received.allocs >= 2 && received.allocs <= 8, `the client received ${received.allocs} allocations (${received.bytes} bytes) for one stopped and one placed`);
    assert.ok(placing.allocs < 4 * COUNT, `placing ${COUNT} received ${placing.allocs} allocations`);
  } finally {
    await client?.shutdown();
    await server.stop();
    await server.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
});
