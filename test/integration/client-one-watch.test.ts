/**
 * A client holds one blocking request to the servers, as Nomad's client holds one connection: a
 * real client (mock driver, in this process, over HTTP with a fetch that tracks the requests in
 * flight) against a real server agent. Its allocation watch is the only request held while nothing
 * changes — the dynamic host volumes are fetched without blocking when the watch's
 * `HostVolumesIndex` moves — and a volume created for the node still reaches it: the directory is
 * made, the volume turns ready, and a delete removes it. Two held requests a client made 10,000
 * simulated nodes hold 20,000 sockets, past the machine's open-files limit.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { api, startAgent } from './helpers/agent-process.js';
import { Client } from '../../src/client/client.js';
import { httpServerConnection } from '../../src/client/server-connection.js';
import { MemoryStateDb } from '../../src/client/state/state-db.js';
import { createMockDriver } from '../../src/drivers/mock/mock-driver.js';
import { simulatedNode } from '../../bench/nodesim/simulated-node.js';
import type { HostVolume } from '../../src/structs/dynamic-host-volume.js';

async function until(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await Promise.resolve(probe()).catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A request waiting on the server: a blocking query past a known index. */
const blocking = (url: string): boolean => /[?&]index=[1-9]/.test(url);

test('a client holds only its allocation watch, and a dynamic host volume still reaches it', async () => {
  const server = await startAgent({ roleArgs: ['-server'], rawExec: false, extraArgs: ['-log-level', 'warn'], readyTimeoutMs: 60_000 });
  const root = mkdtempSync(join(tmpdir(), 'caravan-one-watch-'));
  const inFlight = new Set<string>();
  const seen: string[] = [];
  const answered: string[] = [];
  let mostHeld = 0;
  const tracking: typeof fetch = async (input, init) => {
    const url = String(input);
    const key = `${url} #${seen.length}`;
    seen.push(url);
    inFlight.add(key);
    mostHeld = Math.max(mostHeld, [...inFlight].filter(blocking).length);
    try {
      const res = await fetch(input, init);
      answered.push(url);
      return res;
    } finally {
      inFlight.delete(key);
    }
  };
  const held = (): string[] => [...inFlight].filter(blocking).map((k) => new URL(k.slice(0, k.lastIndexOf(' #'))).pathname);
  let client: Client | null = null;
  try {
    const node = simulatedNode(0);
    client = await Client.start({
      dataDir: root,
      connection: httpServerConnection([server.address.replace('http://', '')], undefined, undefined, tracking),
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
    const nodeId = client.nodeId();
    const volumesPath = `/v1/internal/node/${nodeId}/host-volumes`;
    const watchPath = `/v1/internal/node/${nodeId}/client-allocs`;

    // Settled: the watch is held past its first answer, and the volumes were read once after it.
    await until('the allocation watch held', () => held().includes(watchPath));
    await until('the host volumes read once', () => answered.some((u) => new URL(u).pathname === volumesPath));
    assert.deepEqual(held(), [watchPath], 'the allocation watch is the one request the client holds');
    assert.ok(!seen.some((u) => u.includes(volumesPath) && /[?&]index=/.test(u)), 'the host volumes are read without blocking');

    // A volume created on the node: the server answers once the client made it and reported.
    const made = await api<{ Volume: HostVolume }>(server.address, 'PUT', '/v1/volume/host/create', {
      Volume: { Name: 'one-watch', Type: 'host', PluginID: 'mkdir', NodeID: nodeId, RequestedCapabilities: [{ AccessMode: 'single-node-writer', AttachmentMode: 'file-system' }] },
    });
    assert.equal(made.status, 200, made.text);
    const id = made.body.Volume.ID;
    const path = join(root, 'host_volumes', id);
    await until('the volume ready', async () => (await api<HostVolume>(server.address, 'GET', `/v1/volume/host/${id}`)).body.State === 'ready');
    assert.ok(existsSync(path), 'the client made the directory');
    const c = client;
    assert.equal(c.nodeDescription().HostVolumes?.['one-watch']?.ID, id, 'the node offers the volume');

    // Deleted: the client removes the directory and stops offering it.
    assert.equal((await api(server.address, 'DELETE', `/v1/volume/host/${id}`)).status, 200);
    await until('the directory removed', () => !existsSync(path));
    await until('the node no longer offering it', () => c.nodeDescription().HostVolumes?.['one-watch'] === undefined);

    await until('the allocation watch held again', () => held().includes(watchPath));
    assert.deepEqual(held(), [watchPath]);
    assert.equal(mostHeld, 1, 'never more than one blocking request at a time');
  } finally {
    await client?.shutdown();
    await server.stop();
    await server.cleanup();
    rmSync(root, { recursive: true, force: true });
  }
});
