/**
 * Snapshot formats: a snapshot written in format 2 (before packed rows carried dictionaries)
 * still restores, and what it restores writes out in the current format and reads back the same.
 * The format 2 fixture was written by the encoder of that version (3 jobs, one of them in two
 * versions, 40 allocations on 2 nodes, 8 rows per chunk).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { StateStore } from '../../src/server/state/state-store.js';
import { captureState, encodeSnapshot } from '../../src/server/snapshot/snapshot-encoder.js';
import { decodeSnapshot } from '../../src/server/snapshot/snapshot-decoder.js';
import { SNAPSHOT_FORMAT } from '../../src/server/snapshot/snapshot-format.js';
import { CompactAllocMetric } from '../../src/server/state/compact-metric.js';
import { repoPath } from '../jobspec/repo-root.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { decodeCommand, encodeCommand } from '../../src/server/fsm/command-codec.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

/** The store's rows as plain data, allocations with their job as ID@version. */
function digest(s: StateStore): unknown {
  const allocs = s.allocs().map((a) => ({ ...a, Job: a.Job ? `${a.Job.ID}@${a.Job.Version}` : null }));
  return plain({
    index: s.latestIndex(),
    tableIndexes: s.tableIndexes(),
    jobs: s.jobs('*'),
    versions: s.jobs('*').map((j) => s.jobVersions(j.Namespace, j.ID)),
    allocs,
    evals: s.evals(),
    nodes: s.nodes(),
    byNode: s.nodes().map((n) => [n.ID, s.allocsByNode(n.ID).map((a) => a.ID).sort(), s.nodeUsage.get(n.ID)]),
  });
}

async function restoreFrom(chunks: Iterable<Buffer>): Promise<StateStore> {
  const store = new StateStore();
  store.restore(await decodeSnapshot(chunks));
  return store;
}

describe('snapshot formats', () => {
  it('restores a format 2 snapshot, and writes it back in the current format unchanged', async () => {
    const text = readFileSync(repoPath('test/fixtures/snapshots/format-2.jsonl'));
    assert.ok(text.toString().startsWith('{"t":"header","format":2,'));
    const old = await restoreFrom([text]);
    assert.equal(old.allocs().length, 40);
    for (const a of old.allocs()) {
      assert.ok(a.Job, `${a.ID} has its job`);
      // The allocation shares the stored version's object.
      assert.equal(a.Job, old.jobVersions(a.Namespace, a.JobID).find((v) => v.Version === a.Job!.Version));
      assert.ok(a.Metrics instanceof CompactAllocMetric);
    }
    assert.deepEqual(old.jobVersions('default', 'job-0').map((v) => v.Version), [1, 0]);
    assert.equal(old.allocsByNode('node-a').length + old.allocsByNode('node-b').length, 40);
    const onB = old.allocsByNode('node-b');
    assert.equal(old.nodeUsage.get('node-b').totals.cpu, onB.length * onB[0]!.AllocatedResources!.Tasks['web']!.Cpu.CpuShares);

    const chunks = [...encodeSnapshot(captureState(old), 8)];
    assert.ok(chunks[0]!.toString().startsWith(`{"t":"header","format":${SNAPSHOT_FORMAT},`));
    const again = await restoreFrom(chunks);
    assert.deepEqual(digest(again), digest(old));
  });

  it('shares repeated values of a batch: one resources object and one evaluation ID per job', async () => {
    const state = new StateStore();
    const fsm = new Fsm(state);
    let index = 0;
    // Through the log's text form, as the server applies plans.
    const apply = (c: Command): void => void fsm.apply(decodeCommand(encodeCommand(c)), ++index);
    const node = mockNode();
    apply(nodeCmd(node));
    for (const id of ['a', 'b']) {
      apply(registerCmd(mockJob({ ID: id })));
      const cmd = placeCmd(state.jobById('default', id)!, node, 20);
      // As the scheduler builds them: the allocations of a group share their resources.
      for (const a of cmd.AllocsUpdated) a.AllocatedResources = cmd.AllocsUpdated[0]!.AllocatedResources;
      apply(cmd);
    }
    // One batch holds both jobs: their resources differ, each is repeated 20 times.
    const again = await restoreFrom(encodeSnapshot(captureState(state), 40));
    assert.deepEqual(digest(again), digest(state));
    for (const id of ['a', 'b']) {
      const allocs = again.allocsByJob('default', id);
      assert.equal(allocs.length, 20);
      assert.equal(new Set(allocs.map((a) => a.AllocatedResources)).size, 1, `${id}: one resources object`);
    }
  });
});
