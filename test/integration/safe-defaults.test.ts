/**
 * Nomad's safe defaults through a real agent: without `plugin "raw_exec" { config { enabled =
 * true } }` a non-dev client fingerprints raw_exec as undetected, so a raw_exec job stays
 * unplaced with "missing drivers"; an agent started without -bind listens on loopback only.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { connect } from 'node:net';
import type { Evaluation, Node, NodeListStub } from '../../src/structs/index.js';
import { api, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';
import { teardown, waitFor } from './helpers/client-agent.js';

test('raw_exec is off in a non-dev agent unless its config enables it: the job stays unplaced with "missing drivers"', async () => {
  const dataDir = await mkdtemp('/tmp/cv-');
  const agent = await startAgent({ roleArgs: ['-server', '-client'], dataDir, rawExec: false });
  try {
    const a = agent.address;
    const stub = await waitFor('the node', async () => (await api<NodeListStub[]>(a, 'GET', '/v1/nodes')).body.find((n) => n.Status === 'ready'));
    const node = (await api<Node>(a, 'GET', `/v1/node/${stub.ID}`)).body;
    assert.equal(node.Drivers['raw_exec']?.Detected, false);
    assert.equal(node.Drivers['raw_exec']?.HealthDescription, 'disabled');
    assert.equal(node.Attributes['driver.raw_exec'], undefined);

    const parsed = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: sleepJobHcl('blocked'), Canonicalize: true });
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    const ev = await waitFor('the failed placement', async () =>
      (await api<Evaluation[]>(a, 'GET', '/v1/job/blocked/evaluations')).body.find((e) => e.FailedTGAllocs?.['g']),
    );
    const metric = ev.FailedTGAllocs!['g']!;
    assert.equal(metric.ConstraintFiltered?.['missing drivers'], 1, JSON.stringify(metric));
    assert.deepEqual((await api<unknown[]>(a, 'GET', '/v1/job/blocked/allocations')).body, []);
  } finally {
    await teardown(agent, dataDir);
  }
});

test('an agent without -bind or bind_addr listens on 127.0.0.1 only', async (t) => {
  const external = Object.values(networkInterfaces()).flat().find((i) => i && i.family === 'IPv4' && !i.internal)?.address;
  if (!external) return t.skip('no non-loopback IPv4 address to probe');
  const dataDir = await mkdtemp('/tmp/cv-');
  const agent = await startAgent({ roleArgs: ['-server'], dataDir, noBind: true });
  try {
    const self = (await api<{ config: { BindAddr: string } }>(agent.address, 'GET', '/v1/agent/self')).body;
    assert.equal(self.config.BindAddr, '127.0.0.1');
    const refused = await new Promise<boolean>((resolve) => {
      const s = connect({ host: external, port: agent.port });
      s.once('connect', () => {
        s.destroy();
        resolve(false);
      });
      s.once('error', () => resolve(true));
    });
    assert.equal(refused, true, `the agent answered on ${external}:${agent.port}`);
  } finally {
    await teardown(agent, dataDir);
  }
});
