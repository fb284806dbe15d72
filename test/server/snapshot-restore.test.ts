/**
 * Server.restoreSnapshot: a saved file replaces the whole state through the log, the state's and
 * every table's index become the restore's log index, the leader's duties run again on the
 * restored state, a file that is not a snapshot changes nothing (checked before proposing, and a
 * restore entry that does not decode fails its apply whole), and a reopened server has it.
 */
import { afterEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Server } from '../../src/server/server.js';
import { ServerError } from '../../src/server/server-error.js';
import { Table } from '../../src/server/state/state-reader.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { fakeSchedulerFactory } from './fake-scheduler.js';
import { settled } from './settled-server.js';

const open: Server[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function start(dataDir: string): Promise<Server> {
  const s = await Server.open({ dataDir, numWorkers: 1, schedulerFactory: () => fakeSchedulerFactory });
  open.push(s);
  return settled(s);
}

async function evalDone(s: Server, evalId: string): Promise<void> {
  for (let i = 0; i < 200 && s.state.evalById(evalId)?.Status !== 'complete'; i++) {
    await s.waitForChange([Table.Evals], s.state.latestIndex(), 50);
  }
  assert.equal(s.state.evalById(evalId)?.Status, 'complete');
}

const jobIds = (s: Server): string[] => s.state.jobs('*').map((j) => j.ID).sort();

it('restores a saved state through the log; indexes move forward; duties run on it; bad files change nothing; a reopened server has it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-restore-'));
  dirs.push(dir);
  let s = await start(dir);
  await s.registerNode(mockNode());
  await evalDone(s, (await s.registerJob(mockJob({ ID: 'saved' }))).evalId);
  const snap = s.saveSnapshot();
  const file = gzipSync(Buffer.concat([...snap.chunks]));

  const later = await s.registerJob(mockJob({ ID: 'later' }));
  await evalDone(s, later.evalId);
  const before = s.state.latestIndex();

  await assert.rejects(s.restoreSnapshot(Buffer.from('nope')), (e: unknown) => e instanceof ServerError && e.code === 'SNAPSHOT_INVALID' && /gzip/.test(e.message));
  await assert.rejects(s.restoreSnapshot(file.subarray(0, file.length - 4)), (e: unknown) => e instanceof ServerError && e.code === 'SNAPSHOT_INVALID');
  assert.equal(s.state.latestIndex(), before, 'refused files append nothing');

  const { index } = await s.restoreSnapshot(file);
  assert.ok(index > before);
  assert.deepEqual(jobIds(s), ['saved']);
  assert.equal(s.state.evalById(later.evalId), undefined);
  assert.equal(s.state.latestIndex(), index);
  for (const t of Object.values(Table)) assert.equal(s.state.tableIndex(t), index, `table ${t}`);
  assert.ok(s.state.jobById('default', 'saved')!.ModifyIndex < index, 'objects keep their own indexes');
  assert.ok(s.duties, 'the leader duties run again');
  await evalDone(s, (await s.registerJob(mockJob({ ID: 'after' }))).evalId);

  // A restore entry whose file does not decode fails its apply whole, on every server alike.
  const current = s.state.latestIndex();
  await assert.rejects(s.apply({ Type: 'SnapshotRestore', Snapshot: Buffer.from('garbage').toString('base64'), Now: 0 }), (e: unknown) => e instanceof ServerError && e.code === 'APPLY_FAILED');
  assert.deepEqual(jobIds(s), ['after', 'saved']);
  assert.ok(s.state.latestIndex() <= current + 1);

  await s.close();
  open.splice(0);
  s = await start(dir);
  assert.deepEqual(jobIds(s), ['after', 'saved'], 'kept across a restart');
  assert.equal(s.state.evalById(later.evalId), undefined);
  assert.equal(s.state.restoreIndex?.(), index);

  // And from a snapshot taken after the restore (the restore's index travels in it).
  await s.snapshotNow();
  await s.close();
  open.splice(0);
  s = await start(dir);
  assert.deepEqual(jobIds(s), ['after', 'saved']);
  assert.equal(s.state.restoreIndex?.(), index);
});
