import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AllocListStub, Node } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';
import { execFrames } from './helpers/poseidon-client.js';
import { killDataDirProcesses } from './helpers/processes.js';

test('exec through a client-only agent reaches an allocation held by another client', async () => {
  const tmp = await mkdtemp('/tmp/cv-xf-');
  let server: AgentProcess | undefined;
  let clientA: AgentProcess | undefined;
  let clientB: AgentProcess | undefined;
  try {
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's') });
    const servers = `-servers=127.0.0.1:${server.port}`;
    clientA = await startAgent({ roleArgs: ['-client', servers], dataDir: join(tmp, 'a') });
    clientB = await startAgent({ roleArgs: ['-client', servers], dataDir: join(tmp, 'b') });
    const s = server.address;
    const bAddr = `127.0.0.1:${clientB.port}`;
    let seen = '';
    const nodeB = await waitFor('client B registered and ready', async () => {
      const l = await api<Node[]>(s, 'GET', '/v1/nodes');
      seen = l.text;
      const ready = l.status === 200 ? l.body.filter((n) => n.Status === 'ready') : [];
      if (ready.length !== 2) return undefined;
      // The list stub has no HTTPAddr: read each node in full.
      for (const n of ready) {
        const full = await api<Node>(s, 'GET', `/v1/node/${n.ID}`);
        if (full.body.HTTPAddr === bAddr) return full.body;
      }
      return undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}; nodes: ${seen}`);
    });

    // Pinned to client B, so only a forward can reach it from client A.
    const put = await api(s, 'PUT', '/v1/jobs', {
      Job: {
        ID: 'xf',
        Type: 'service',
        Datacenters: ['dc1'],
        Constraints: [{ LTarget: '${node.unique.id}', RTarget: nodeB.ID, Operand: '=' }],
        TaskGroups: [{
          Name: 'g',
          Tasks: [{
            Name: 't',
            Driver: 'raw_exec',
            Config: { command: '/bin/sh', args: ['-c', 'while true; do sleep 0.2; done'] },
            Resources: { CPU: 50, MemoryMB: 32 },
          }],
        }],
      },
    });
    assert.equal(put.status, 200, put.text);
    const alloc = await waitFor('a running alloc on client B', async () => {
      const l = await api<AllocListStub[]>(s, 'GET', '/v1/job/xf/allocations');
      return l.body.find((a) => a.ClientStatus === 'running');
    });
    assert.equal(alloc.NodeID, nodeB.ID);

    const out = await execFrames(clientA.address, alloc.ID, { task: 't', command: ['echo', 'hi'] });
    assert.equal(out.stdout.trim(), 'hi', JSON.stringify(out.frames));
    assert.equal(out.exitCode, 0, JSON.stringify(out.frames));

    // An unknown allocation through client A is still a clear error, not a hang or a loop.
    const unknown = await execFrames(clientA.address, '00000000-0000-0000-0000-000000000000', { task: 't', command: ['echo', 'hi'] });
    assert.equal(unknown.exitCode, null);
    assert.equal(unknown.stdout, '');
  } finally {
    await clientA?.stop();
    await clientB?.stop();
    await server?.stop();
    await killDataDirProcesses(tmp);
    await rm(tmp, { recursive: true, force: true });
  }
});
