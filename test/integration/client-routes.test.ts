import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

const JOB = `
job "ports" {
  datacenters = ["dc1"]
  group "g" {
    network {
      port "http" {}
    }
    update {
      max_parallel = 0
    }
    ephemeral_disk {
      size = 150
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
      resources {
        cpu    = 120
        memory = 48
      }
    }
  }
}`;

interface Resources {
  CPU: number;
  MemoryMB: number;
  DiskMB: number;
  Networks: { IP: string }[] | null;
}
interface AllocBody {
  ID: string;
  NodeID: string;
  ClientStatus: string;
  Job: unknown;
  Resources: Resources;
  TaskResources: Record<string, Resources>;
  SharedResources: Resources;
  AllocatedResources: { Shared: { Ports: { Label: string; Value: number; HostIP: string }[]; Networks: { IP: string }[] } };
}


/** The first Allocation event of the stream from index 1, read off the wire. */
async function firstAllocEvent(address: string): Promise<{ Job?: unknown; Resources?: Resources }> {
  const ac = new AbortController();
  const res = await fetch(`${address}/v1/event/stream?index=1&topic=Allocation`, { signal: ac.signal });
  const reader = res.body!.getReader();
  const frames = new JsonFrameDecoder();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      assert.ok(!done, 'stream ended');
      for (const text of frames.push(Buffer.from(value).toString('utf8'))) {
        const batch = JSON.parse(text) as { Events?: { Payload: { Allocation?: { Job?: unknown; Resources?: Resources } } }[] };
        const ev = batch.Events?.find((e) => e.Payload.Allocation);
        if (ev) return ev.Payload.Allocation!;
      }
    }
  } finally {
    ac.abort();
  }
}

test('allocation resources as Nomad sends them, host IPs, client stats, gc, metadata and checks through a real agent', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  try {
    const a = agent.address;
    const parsed = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: JOB, Canonicalize: true });
    assert.equal(parsed.status, 200, parsed.text);
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    const running = await waitFor('a running allocation', async () => {
      const list = (await api<{ ID: string; ClientStatus: string }[]>(a, 'GET', '/v1/job/ports/allocations')).body;
      return list.find((x) => x.ClientStatus === 'running');
    });

    // Nomad's derived resource fields, and the node's address in ports and networks.
    const alloc = (await api<AllocBody>(a, 'GET', `/v1/allocation/${running.ID}`)).body;
    assert.equal(alloc.TaskResources['t']!.CPU, 120);
    assert.equal(alloc.TaskResources['t']!.MemoryMB, 48);
    assert.equal(alloc.SharedResources.DiskMB, 150);
    assert.deepEqual([alloc.Resources.CPU, alloc.Resources.MemoryMB, alloc.Resources.DiskMB], [120, 48, 150]);
    const port = alloc.AllocatedResources.Shared.Ports.find((p) => p.Label === 'http')!;
    assert.equal(port.HostIP, '127.0.0.1');
    assert.ok(port.Value >= 20000);
    assert.equal(alloc.AllocatedResources.Shared.Networks[0]!.IP, '127.0.0.1');
    const onNode = (await api<AllocBody[]>(a, 'GET', `/v1/node/${alloc.NodeID}/allocations`)).body;
    assert.equal(onNode.find((x) => x.ID === alloc.ID)!.Resources.CPU, 120);
    const node = (await api<{ Resources: Resources; Reserved: Resources; NodeResources: { Networks: { IP: string; Mode: string }[] } }>(a, 'GET', `/v1/node/${alloc.NodeID}`)).body;
    assert.ok(node.Resources.CPU > 0 && node.Resources.MemoryMB > 0);
    assert.equal(node.Reserved.CPU, 0);
    assert.deepEqual([node.NodeResources.Networks[0]!.IP, node.NodeResources.Networks[0]!.Mode], ['127.0.0.1', 'host']);

    // Allocation events carry no Job (a job the Allocation topic would repeat in every event).
    const ev = await firstAllocEvent(a);
    assert.equal(ev.Job, null);
    assert.equal(ev.Resources!.CPU, 120);

    // Host stats.
    const stats = await api<{ Memory: { Total: number; Used: number }; CPU: { CPU: string }[]; DiskStats: { Size: number; Mountpoint: string }[]; Uptime: number; Timestamp: number }>(a, 'GET', '/v1/client/stats');
    assert.equal(stats.status, 200, stats.text);
    assert.ok(stats.body.Memory.Total > 0 && stats.body.Memory.Used > 0);
    assert.ok(stats.body.CPU.length > 0 && stats.body.CPU[0]!.CPU.startsWith('cpu'));
    assert.ok(stats.body.DiskStats[0]!.Size > 0);
    assert.ok(stats.body.Uptime > 0);
    assert.equal((await api(a, 'GET', `/v1/client/stats?node_id=${alloc.NodeID}`)).status, 200);
    assert.equal((await api(a, 'GET', '/v1/client/stats?node_id=no-such-node')).status, 404);

    // Checks: none run (no provider = "nomad" checks); unknown allocations are 404.
    const checks = await api(a, 'GET', `/v1/client/allocation/${alloc.ID}/checks`);
    assert.equal(checks.status, 200, checks.text);
    assert.deepEqual(checks.body, {});
    assert.deepEqual((await api(a, 'GET', `/v1/allocation/${alloc.ID}/checks`)).body, {});
    assert.equal((await api(a, 'GET', '/v1/allocation/00000000-0000-0000-0000-000000000000/checks')).status, 404);
    const cliChecks = await runCli(a, ['alloc', 'checks', alloc.ID.slice(0, 8)]);
    assert.equal(cliChecks.code, 0, cliChecks.stderr);
    assert.match(cliChecks.stdout, /No check results for allocation/);

    // Dynamic node metadata: set, seen on the node, rejected when malformed, unset; and the CLI.
    const set = await api<{ Meta: Record<string, string>; Dynamic: Record<string, string | null> }>(a, 'POST', '/v1/client/metadata', { Meta: { team: 'infra' } });
    assert.equal(set.status, 200, set.text);
    assert.equal(set.body.Dynamic['team'], 'infra');
    assert.equal(set.body.Meta['team'], 'infra');
    assert.equal((await api<{ Meta: Record<string, string> }>(a, 'GET', `/v1/node/${alloc.NodeID}`)).body.Meta['team'], 'infra');
    const bad = await api(a, 'POST', '/v1/client/metadata', { Meta: { 'bad key': 'x', other: 'y' } });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /bad key/);
    const read = await api<{ Meta: Record<string, string> }>(a, 'GET', '/v1/client/metadata');
    assert.equal(read.body.Meta['other'], undefined);
    const cliApply = await runCli(a, ['node', 'meta', 'apply', '-unset', 'team', 'rack=r1']);
    assert.equal(cliApply.code, 0, cliApply.stderr);
    const cliRead = await runCli(a, ['node', 'meta', 'read', '-node-id', alloc.NodeID.slice(0, 8)]);
    assert.equal(cliRead.code, 0, cliRead.stderr);
    assert.match(cliRead.stdout, /rack\s+=\s+r1/);
    assert.match(cliRead.stdout, /team\s+=\s+<unset>/);
    const nodeMeta = (await api<{ Meta: Record<string, string> }>(a, 'GET', `/v1/node/${alloc.NodeID}`)).body.Meta;
    assert.equal(nodeMeta['rack'], 'r1');
    assert.equal(nodeMeta['team'], undefined);

    // GC: a running allocation is refused; once stopped it is destroyed here (its directory too).
    const early = await api(a, 'GET', `/v1/client/allocation/${alloc.ID}/gc`);
    assert.equal(early.status, 400);
    assert.match(early.text, /still running/);
    const allocDir = join(agent.dataDir, 'client', 'alloc', alloc.ID);
    assert.ok(existsSync(allocDir), `expected ${allocDir}`);
    assert.equal((await api(a, 'DELETE', '/v1/job/ports')).status, 200);
    await waitFor('the allocation to stop', async () => {
      const x = (await api<AllocBody>(a, 'GET', `/v1/allocation/${alloc.ID}`)).body;
      return x.ClientStatus === 'complete' ? x : undefined;
    });
    const gc = await api(a, 'GET', `/v1/client/allocation/${alloc.ID}/gc`);
    assert.equal(gc.status, 200, gc.text);
    assert.ok(!existsSync(allocDir), 'the allocation directory is removed');
    assert.equal((await api(a, 'GET', `/v1/client/allocation/${alloc.ID}/gc`)).status, 404);
    assert.equal((await api(a, 'GET', '/v1/client/gc')).status, 200);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
