/**
 * Node fingerprint with a real dev agent: the node registers with the attributes Nomad reports
 * (kernel.name, cpu.numcores, unique.hostname) and a healthy raw_exec driver, and a constraint
 * on ${attr.kernel.name} places on it (while one that cannot match does not).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Evaluation, Node, NodeListStub } from '../../src/structs/index.js';
import { api } from './helpers/agent-process.js';
import { jobAllocs, runJob, startDevAgent, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

function constrainedHcl(id: string, kernel: string): string {
  return `
job "${id}" {
  datacenters = ["*"]
  constraint {
    attribute = "$\{attr.kernel.name}"
    value     = "${kernel}"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}
`;
}

test('client: the node fingerprint reports Nomad attributes and raw_exec, and attribute constraints place on it', async () => {
  const agent = await startDevAgent();
  const tmp = await mkdtemp(join(tmpdir(), 'cv-jobs-'));
  try {
    const [stub] = await waitFor('the dev node to register', async () => {
      const nodes = (await api<NodeListStub[]>(agent.address, 'GET', '/v1/nodes')).body;
      return nodes.length === 1 && nodes[0]!.Status === 'ready' ? nodes : undefined;
    });
    const node = (await api<Node>(agent.address, 'GET', `/v1/node/${stub!.ID}`)).body;
    assert.equal(node.Attributes['kernel.name'], process.platform);
    assert.equal(node.Attributes['cpu.numcores'], String(availableParallelism()));
    assert.equal(node.Attributes['unique.hostname'], hostname());
    assert.match(node.Attributes['kernel.version'] ?? '', /^\d+\.\d+/);
    assert.match(node.Attributes['cpu.arch'] ?? '', /^(amd64|arm64|386|arm)$/);
    assert.ok(Number(node.Attributes['memory.totalbytes']) > 0);
    const raw = node.Drivers['raw_exec'];
    assert.ok(raw, `drivers: ${Object.keys(node.Drivers).join(', ')}`);
    assert.equal(raw.Detected, true);
    assert.equal(raw.Healthy, true);
    assert.equal(node.Attributes['driver.raw_exec'], '1');

    await runJob(agent.address, tmp, 'onlinux', constrainedHcl('onlinux', process.platform));
    const [placed] = await waitRunning(agent.address, 'onlinux', 1);
    assert.equal(placed!.NodeID, node.ID);

    // The same constraint with a kernel this node does not have: nothing placed, the eval says why.
    await runJob(agent.address, tmp, 'onplan9', constrainedHcl('onplan9', 'plan9'));
    const evals = await waitFor('the eval of the unplaceable job', async () => {
      const list = (await api<Evaluation[]>(agent.address, 'GET', '/v1/job/onplan9/evaluations')).body;
      const done = list.find((e) => e.Status === 'complete' && e.FailedTGAllocs);
      return done ? list : undefined;
    });
    const failed = evals.find((e) => e.FailedTGAllocs)!.FailedTGAllocs!['g'];
    assert.ok(failed, JSON.stringify(evals));
    assert.equal(failed.NodesEvaluated, 1);
    assert.equal(failed.ConstraintFiltered?.['${attr.kernel.name} = plan9'], 1, JSON.stringify(failed));
    assert.equal((await jobAllocs(agent.address, 'onplan9')).length, 0);
  } finally {
    await teardown(agent, agent.dataDir);
    await rm(tmp, { recursive: true, force: true });
  }
});
