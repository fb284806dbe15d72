// Reliability: kill -9 a server in the middle of a stream of job registrations. Every
// registration the server acknowledged must be there after a restart from the same data dir, and
// every evaluation the registrations created must complete.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Evaluation } from '../../src/structs/index.js';
import { mockNode } from '../mock/factories.js';
import { api, startAgent } from './helpers/agent-process.js';

function jobBody(id: string): unknown {
  return {
    Job: {
      ID: id,
      Type: 'batch',
      Datacenters: ['*'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'mock_driver', Config: { run_for: '1s' }, Resources: { CPU: 10, MemoryMB: 10 } }] }],
    },
  };
}

test('server agent: SIGKILL during a stream of registrations loses no acknowledged job', async () => {
  const first = await startAgent({ roleArgs: ['-server'] });
  const node = mockNode({ ID: randomUUID(), Status: 'ready' });
  const reg = await api(first.address, 'PUT', '/v1/internal/node/register', { Node: node });
  assert.equal(reg.status, 200, reg.text);

  const acknowledged = new Map<string, string>(); // job ID → eval ID
  let stop = false;
  let n = 0;
  // Four concurrent writers; each keeps registering until the server dies under it.
  const writer = async (w: number) => {
    while (!stop) {
      const id = `crash-${w}-${n++}`;
      try {
        const res = await api<{ EvalID: string }>(first.address, 'PUT', '/v1/jobs', jobBody(id));
        if (res.status === 200) acknowledged.set(id, res.body.EvalID);
      } catch {
        return; // connection refused or reset: the server is gone
      }
    }
  };
  const writers = [0, 1, 2, 3].map(writer);
  while (acknowledged.size < 40) await new Promise((r) => setTimeout(r, 5));
  await first.kill();
  stop = true;
  await Promise.all(writers);
  assert.ok(acknowledged.size >= 40);

  const second = await startAgent({ roleArgs: ['-server'], dataDir: first.dataDir, port: first.port });
  try {
    // The node is known again after the restart; re-register it as a client would.
    await api(second.address, 'PUT', '/v1/internal/node/register', { Node: node });
    for (const [id, evalId] of acknowledged) {
      const job = await api(second.address, 'GET', `/v1/job/${id}`);
      assert.equal(job.status, 200, `acknowledged job ${id} missing after restart: ${job.text}`);
      let ev = await api<Evaluation>(second.address, 'GET', `/v1/evaluation/${evalId}`);
      assert.equal(ev.status, 200, `eval ${evalId} of ${id} missing: ${ev.text}`);
      while (ev.body.Status === 'pending') {
        ev = await api<Evaluation>(second.address, 'GET', `/v1/evaluation/${evalId}?index=${ev.index}&wait=10s`);
      }
      assert.equal(ev.body.Status, 'complete', `eval of ${id}: ${ev.body.Status} ${ev.body.StatusDescription}`);
    }
  } finally {
    await second.stop();
    await second.cleanup();
  }
});
