import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Node } from '../../src/structs/index.js';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';
import { killDataDirProcesses } from './helpers/processes.js';

function serviceJob(id: string, count: number): Record<string, unknown> {
  return {
    ID: id,
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'g',
        Count: count,
        Migrate: { MaxParallel: 1 },
        Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'while true; do sleep 0.2; done'] }, Resources: { CPU: 20, MemoryMB: 16 } }],
      },
    ],
  };
}

test('node drain moves the allocations of a drained node to the other node', async () => {
  const tmp = await mkdtemp('/tmp/cv-dr-');
  const agents: AgentProcess[] = [];
  try {
    const server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's') });
    agents.push(server);
    const servers = `-servers=127.0.0.1:${server.port}`;
    agents.push(await startAgent({ roleArgs: ['-client', servers, '-node', 'one'], dataDir: join(tmp, 'c1') }));
    agents.push(await startAgent({ roleArgs: ['-client', servers, '-node', 'two'], dataDir: join(tmp, 'c2') }));
    const s = server.address;
    const nodes = await waitFor('two ready nodes', async () => {
      const l = await api<Node[]>(s, 'GET', '/v1/nodes');
      const ready = l.body.filter((n) => n.Status === 'ready');
      return ready.length === 2 ? ready : undefined;
    });
    const one = nodes.find((n) => n.Name === 'one')!;
    const two = nodes.find((n) => n.Name === 'two')!;

    // Keep node two out while placing, so every allocation lands on node one.
    await api(s, 'PUT', `/v1/node/${two.ID}/eligibility`, { Eligibility: 'ineligible' });
    const reg = await api(s, 'PUT', '/v1/jobs', { Job: serviceJob('drainme', 3) });
    assert.equal(reg.status, 200, reg.text);
    await waitFor('three running allocs on node one', async () => {
      const l = await api<AllocListStub[]>(s, 'GET', '/v1/job/drainme/allocations');
      const running = l.body.filter((a) => a.ClientStatus === 'running' && a.NodeID === one.ID);
      return running.length === 3 ? running : undefined;
    }, 30_000);
    await api(s, 'PUT', `/v1/node/${two.ID}/eligibility`, { Eligibility: 'eligible' });

    // Bad input is refused with the field named.
    const bad = await api(s, 'PUT', `/v1/node/${one.ID}/drain`, { DrainSpec: { Deadline: 'soon' } });
    assert.equal(bad.status, 400);
    assert.match(bad.text, /DrainSpec\.Deadline/);

    // Through a client agent's address, as an operator on that machine would.
    const drain = await runCli(agents[1]!.address, ['node', 'drain', '-enable', '-yes', '-deadline', '5m', one.ID.slice(0, 8)], { timeoutMs: 90_000 });
    assert.equal(drain.code, 0, `${drain.stdout}\n${drain.stderr}`);
    assert.match(drain.stdout, /drain strategy set/);
    assert.match(drain.stdout, /marked for migration/);
    assert.match(drain.stdout, /Drain complete for node/);
    assert.match(drain.stdout, /have stopped/);

    const l = await api<AllocListStub[]>(s, 'GET', '/v1/job/drainme/allocations');
    const running = l.body.filter((a) => a.ClientStatus === 'running');
    assert.equal(running.length, 3, JSON.stringify(l.body.map((a) => [a.NodeID, a.ClientStatus, a.DesiredStatus])));
    assert.ok(running.every((a) => a.NodeID === two.ID), 'all running on node two');
    const node = await api<Node>(s, 'GET', `/v1/node/${one.ID}`);
    assert.equal(node.body.DrainStrategy, null);
    assert.equal(node.body.SchedulingEligibility, 'ineligible');
    assert.ok(node.body.Events?.some((e) => e.Message === 'Node drain complete'));

    // Node one's agent no longer holds them: its client routes reach node two through the server.
    const moved = running[0]!;
    const stats = await api(agents[1]!.address, 'GET', `/v1/client/allocation/${moved.ID}/stats`);
    assert.equal(stats.status, 200, stats.text);

    // -disable makes it eligible again.
    const off = await runCli(s, ['node', 'drain', '-disable', '-yes', one.ID]);
    assert.equal(off.code, 0, off.stderr);
    assert.equal((await api<Node>(s, 'GET', `/v1/node/${one.ID}`)).body.SchedulingEligibility, 'eligible');
  } finally {
    for (const a of agents.reverse()) await a.stop().catch(() => undefined);
    await killDataDirProcesses(tmp);
    await rm(tmp, { recursive: true, force: true });
  }
});
