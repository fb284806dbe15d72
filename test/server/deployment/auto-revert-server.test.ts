import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '../../../src/server/server.js';
import { Table } from '../../../src/server/state/state-reader.js';
import type { Job } from '../../../src/structs/index.js';
import { mockJob, mockNode, mockTask } from '../../mock/factories.js';

const S = 1_000_000_000;

async function until<T>(server: Server, what: string, probe: () => T | undefined | false): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    await server.waitForChange([Table.Evals, Table.Deployments, Table.Jobs, Table.Allocs], server.state.latestIndex(), 25);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function version(env: string): Job {
  const base = mockJob({ ID: 'web' });
  const update = { Stagger: 0, MaxParallel: 1, HealthCheck: 'task_states', MinHealthyTime: S, HealthyDeadline: 30 * S, ProgressDeadline: 600 * S, Canary: 0, AutoRevert: true, AutoPromote: false };
  return { ...base, TaskGroups: [{ ...base.TaskGroups[0]!, Count: 2, Update: update, Tasks: [mockTask({ Env: { V: env } })] }] };
}

async function reportHealth(server: Server, ids: string[], healthy: boolean): Promise<void> {
  await server.updateAllocsFromClient(
    ids.map((id) => {
      const a = server.state.allocById(id)!;
      return { ID: id, NodeID: a.NodeID, ClientStatus: 'running', ClientDescription: '', TaskStates: {}, DeploymentStatus: { Healthy: healthy, Timestamp: new Date().toISOString(), Canary: false, ModifyIndex: 0 } };
    }),
    server.state.nodeById(server.state.allocById(ids[0]!)!.NodeID)!.SecretID,
  );
}

test('through the server: a healthy rollout marks the version stable; an unhealthy one fails and auto-reverts to it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-revert-'));
  const server = await Server.open({ dataDir: dir, numWorkers: 1 });
  try {
    await server.registerNode(mockNode());
    const first = await server.registerJob(version('a'));
    await until(server, 'first eval', () => server.state.evalById(first.evalId)?.Status === 'complete');
    const d0 = server.state.deploymentsByJob('default', 'web')[0]!;
    await reportHealth(server, server.state.allocsByJob('default', 'web').map((a) => a.ID), true);
    await until(server, 'first deployment successful', () => server.state.deploymentById(d0.ID)?.Status === 'successful');
    assert.equal(server.state.jobById('default', 'web')!.Stable, true);

    const second = await server.registerJob(version('b'));
    await until(server, 'second eval', () => server.state.evalById(second.evalId)?.Status === 'complete');
    const d1 = await until(server, 'second deployment', () => server.state.deploymentsByJob('default', 'web').find((d) => d.JobVersion === 1));
    const fresh = server.state.allocsByJob('default', 'web').filter((a) => a.DeploymentID === d1.ID && a.DesiredStatus === 'run');
    assert.equal(fresh.length, 1, 'max_parallel 1: one new allocation');
    await reportHealth(server, [fresh[0]!.ID], false);
    const failed = await until(server, 'second deployment failed', () => {
      const d = server.state.deploymentById(d1.ID);
      return d?.Status === 'failed' ? d : undefined;
    });
    assert.equal(failed.StatusDescription, 'Failed due to unhealthy allocations - rolling back to job version 0');
    const reverted = await until(server, 'job reverted', () => {
      const j = server.state.jobById('default', 'web');
      return j && j.Version === 2 ? j : undefined;
    });
    assert.deepEqual(reverted.TaskGroups[0]!.Tasks[0]!.Env, { V: 'a' });
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
