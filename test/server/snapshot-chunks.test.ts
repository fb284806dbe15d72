import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import type { Command } from '../../src/server/fsm/commands.js';
import { captureState, encodeSnapshot } from '../../src/server/snapshot/snapshot-encoder.js';
import { decodeSnapshot } from '../../src/server/snapshot/snapshot-decoder.js';
import { SnapshotError } from '../../src/server/snapshot/snapshot-format.js';
import { SqliteLogBackend } from '../../src/server/log/sqlite-log-backend.js';
import type { LogBackend, SnapshotSink } from '../../src/server/log/log-backend.js';
import { Server, type ServerConfig } from '../../src/server/server.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { settled } from './settled-server.js';
import { evalCmd, mockEval, nodeCmd, placeCmd, registerCmd } from './fsm-helpers.js';

function fresh(): { state: StateStore; apply: (c: Command) => void } {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  return { state, apply: (c) => void fsm.apply(c, ++index) };
}

/**
 * Everything observable about a store as plain, key-sorted data: rows of every table, table
 * indexes, secondary indexes and node usage. An allocation's job is compared by identity of
 * version (ID, Version), which is what a snapshot preserves.
 */
function digest(s: StateStore): unknown {
  const sorted = <T>(xs: T[], key: (x: T) => string): T[] => [...xs].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const norm = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;
  const allocs = sorted(s.allocs(), (a) => a.ID).map((a) => ({ ...a, Job: a.Job ? `${a.Job.ID}@${a.Job.Version}` : null }));
  const jobs = s.jobs('*');
  return norm({
    index: s.latestIndex(),
    tableIndexes: s.tableIndexes(),
    jobs,
    versions: jobs.map((j) => s.jobVersions(j.Namespace, j.ID)),
    summaries: jobs.map((j) => s.jobSummary(j.Namespace, j.ID)),
    allocs,
    evals: s.evals(),
    nodes: s.nodes(),
    deployments: s.deployments(),
    nodePools: s.nodePools(),
    variables: s.variables('*'),
    services: s.serviceRegistrations('*'),
    byNode: s.nodes().map((n) => [n.ID, s.allocsByNode(n.ID).map((a) => a.ID).sort(), s.nodeUsage.get(n.ID)]),
    byJob: jobs.map((j) => [j.ID, s.allocsByJob(j.Namespace, j.ID).map((a) => a.ID).sort(), s.evalsByJob(j.Namespace, j.ID).map((e) => e.ID).sort()]),
  });
}

/** A serialized state as plain JSON data, by part. */
function normalized(s: unknown): Record<string, unknown> {
  return JSON.parse(JSON.stringify(s)) as Record<string, unknown>;
}

/** A state with three jobs, two nodes, 40 allocations (some updated by a client), evals. */
function populated(): StateStore {
  const { state, apply } = fresh();
  const nodes = [mockNode(), mockNode({ NodePool: 'edge' })];
  for (const n of nodes) apply(nodeCmd(n));
  apply({ Type: 'NodePoolUpsert', Pools: [{ Name: 'gpu', Description: 'GPU nodes', Meta: { vendor: 'acme' }, SchedulerConfiguration: null }], Now: 1 });
  apply({ Type: 'VariableSet', Variable: { Namespace: 'default', Path: 'app/db', Items: { user: 'u', pass: 'p' } }, Now: 2 });
  for (let j = 0; j < 3; j++) {
    const job = mockJob({ ID: `job-${j}` });
    const ev = mockEval(job);
    apply(registerCmd(job, ev));
    const stored = state.jobById('default', job.ID)!;
    apply(placeCmd(stored, nodes[j % 2]!, 10));
    apply(evalCmd([{ ...ev, Status: 'complete' }]));
  }
  // A second version of job-0 with more placements, so allocations reference two versions.
  const v1 = { ...state.jobById('default', 'job-0')!, Meta: { v: '2' } };
  apply(registerCmd(v1));
  apply(placeCmd(state.jobById('default', 'job-0')!, nodes[1]!, 10));
  const some = state.allocs().slice(0, 5);
  const a0 = some[0]!;
  apply({ Type: 'ServiceRegistrationUpsert', Services: [{ ID: `_nomad-task-${a0.ID}-web-api-http`, ServiceName: 'api', Namespace: a0.Namespace, NodeID: a0.NodeID, Datacenter: 'dc1', JobID: a0.JobID, AllocID: a0.ID, Tags: ['v1'], Address: '10.0.0.1', Port: 8080 }], Now: 3 });
  apply({
    Type: 'AllocClientUpdate',
    Allocs: some.map((a) => ({ ID: a.ID, ClientStatus: 'running', ClientDescription: 'up', TaskStates: {} })),
    Evals: [],
    Now: 1,
  } as unknown as Command);
  return state;
}

describe('chunked state snapshots', () => {
  it('a snapshot of many chunks restores exactly', async () => {
    const state = populated();
    assert.equal(state.allocs().length, 40);
    assert.deepEqual(state.nodePools().map((p) => p.Name), ['all', 'default', 'edge', 'gpu']);
    const chunks = [...encodeSnapshot(captureState(state), 3)];
    assert.ok(chunks.length > 15, `expected many chunks, got ${chunks.length}`);
    const copy = new StateStore();
    copy.restore(await decodeSnapshot(chunks));
    assert.deepEqual(digest(copy), digest(state));
    // The restored store is the same as one restored from the whole-state form.
    const whole = new StateStore();
    whole.restore(JSON.parse(JSON.stringify(state.serialize())));
    assert.deepEqual(digest(copy), digest(whole));
  });

  it('carries every part of the state the whole-state form does (scheduler configuration, sources, scaling events, ACLs, …)', async () => {
    const { state, apply } = fresh();
    const node = mockNode();
    apply(nodeCmd(node));
    const job = mockJob({ ID: 'web' });
    apply({ ...registerCmd(job, mockEval(job)), Submission: { Source: 'job "web" {}', Format: 'hcl2', VariableFlags: {}, Variables: '' } } as Command);
    apply({ Type: 'ScalingEventRecord', Namespace: 'default', JobID: 'web', Group: job.TaskGroups[0]!.Name, Event: { Message: 'asked', Error: false, Meta: null }, Now: 5 } as unknown as Command);
    apply({ Type: 'SchedulerConfigSet', Config: { ...state.schedulerConfig(), SchedulerAlgorithm: 'spread' }, Now: 6 } as unknown as Command);
    const whole = normalized(state.serialize());
    const decoded = await decodeSnapshot(encodeSnapshot(captureState(state), 2));
    // Every part the store serializes is in the chunked snapshot (a new table must be added to both).
    assert.deepEqual(Object.keys(decoded).sort(), Object.keys(whole).sort());
    const copy = new StateStore();
    copy.restore(decoded);
    const back = normalized(copy.serialize());
    for (const k of ['schedulerConfig', 'submissions', 'scalingEvents', 'acl', 'namespaces', 'nodePools', 'variables', 'services', 'hostVolumes']) {
      assert.deepEqual(back[k], whole[k], k);
    }
    assert.equal((back['schedulerConfig'] as { SchedulerAlgorithm: string }).SchedulerAlgorithm, 'spread');
    assert.equal((back['submissions'] as unknown[]).length, 1);
    assert.equal((back['scalingEvents'] as unknown[]).length, 1);
  });

  it('decodes chunks split at arbitrary byte boundaries', async () => {
    const state = populated();
    const all = Buffer.concat([...encodeSnapshot(captureState(state), 7)]);
    const pieces: Buffer[] = [];
    for (let i = 0; i < all.length; i += 1000) pieces.push(all.subarray(i, i + 1000));
    const copy = new StateStore();
    copy.restore(await decodeSnapshot(pieces));
    assert.deepEqual(digest(copy), digest(state));
  });

  it('the capture is the state at its index: later writes are not in it', async () => {
    const { state, apply } = fresh();
    const node = mockNode();
    apply(nodeCmd(node));
    const job = mockJob({ ID: 'web' });
    apply(registerCmd(job));
    const capture = captureState(state);
    const before = digest(state);
    apply(placeCmd(state.jobById('default', 'web')!, node, 4));
    apply({ Type: 'NodeDeregister', NodeIDs: [node.ID] } as unknown as Command);
    const copy = new StateStore();
    copy.restore(await decodeSnapshot(encodeSnapshot(capture, 2)));
    assert.deepEqual(digest(copy), before);
  });

  it('refuses a snapshot cut short, and still reads the whole-state form of earlier versions', async () => {
    const state = populated();
    const chunks = [...encodeSnapshot(captureState(state), 5)];
    await assert.rejects(decodeSnapshot(chunks.slice(0, -1)), (e: unknown) => e instanceof SnapshotError && e.code === 'SNAPSHOT_CORRUPT');
    await assert.rejects(decodeSnapshot(chunks.slice(1)), (e: unknown) => e instanceof SnapshotError && e.code === 'SNAPSHOT_CORRUPT');
    const legacy = Buffer.from(JSON.stringify(state.serialize()), 'utf8');
    const copy = new StateStore();
    copy.restore(await decodeSnapshot([legacy]));
    assert.deepEqual(digest(copy), digest(state));
  });
});

// ---- through the server ----

const dirs: string[] = [];
const servers: Server[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'caravan-snap-'));
  dirs.push(d);
  return d;
}

async function start(over: Partial<ServerConfig> & { dataDir: string }): Promise<Server> {
  const s = await Server.open({ numWorkers: 0, schedulerFactory: () => undefined, gcIntervalMs: 0, ...over });
  servers.push(s);
  return settled(s);
}

/** What a test log records, and how it misbehaves. */
interface Probe {
  calls: string[];
  /** Commit rejects (as a crash between the last chunk and the commit would leave it). */
  failCommit: boolean;
  /** While set, every chunk write waits for it. */
  gate: Promise<void> | null;
}

/** A log backend that records snapshot and compaction calls around a real SQLite one. */
function probed(inner: SqliteLogBackend, probe: Probe): LogBackend {
  return {
    append: (e) => inner.append(e),
    read: (f, t) => inner.read(f, t),
    subscribe: (f, s) => inner.subscribe(f, s),
    lastIndex: () => inner.lastIndex(),
    saveSnapshot: (i, d) => inner.saveSnapshot(i, d),
    loadLatestSnapshot: () => inner.loadLatestSnapshot(),
    openLatestSnapshot: () => inner.openLatestSnapshot(),
    compact: async (i) => {
      probe.calls.push(`compact:${i}`);
      await inner.compact(i);
    },
    close: () => inner.close(),
    beginSnapshot: async (index): Promise<SnapshotSink> => {
      const sink = await inner.beginSnapshot(index);
      probe.calls.push(`begin:${index}`);
      return {
        index,
        write: async (c) => {
          if (probe.gate) await probe.gate;
          probe.calls.push('write');
          await sink.write(c);
        },
        commit: async () => {
          if (probe.failCommit) {
            probe.calls.push('commit-failed');
            throw new Error('simulated crash before commit');
          }
          await sink.commit();
          probe.calls.push(`commit:${index}`);
        },
        abort: async () => {
          // A crash does not clean up: leave the chunks where they are.
          probe.calls.push('abort');
        },
      };
    },
  };
}

afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function fill(s: Server, from: number, n: number): Promise<void> {
  for (let i = from; i < from + n; i++) await s.registerJob(mockJob({ ID: `job-${i}` }));
}

describe('server snapshots in chunks', () => {
  it('restores a multi-chunk snapshot plus the log tail exactly', async () => {
    const dir = tempDir();
    const first = await start({ dataDir: dir, snapshotRowsPerChunk: 2 });
    await first.registerNode(mockNode());
    await fill(first, 0, 9);
    await first.snapshotNow();
    await fill(first, 9, 3);
    const want = digest(first.store);
    await first.close();
    const second = await start({ dataDir: dir });
    assert.deepEqual(digest(second.store), want);
  });

  it('compacts the log only after the snapshot is committed', async () => {
    const dir = tempDir();
    const probe: Probe = { calls: [], failCommit: false, gate: null };
    const s = await start({ dataDir: dir, logBackend: probed(SqliteLogBackend.open(join(dir, 'log')), probe), snapshotRowsPerChunk: 1 });
    await fill(s, 0, 4);
    const index = await s.snapshotNow();
    const commitAt = probe.calls.indexOf(`commit:${index}`);
    assert.ok(commitAt > 0, probe.calls.join(' '));
    assert.deepEqual(probe.calls.slice(commitAt), [`commit:${index}`, `compact:${index}`]);
    assert.ok(probe.calls.filter((c) => c === 'write').length > 4);
  });

  it('a crash before commit restores from the previous snapshot plus the log, and nothing is compacted', async () => {
    const dir = tempDir();
    const probe: Probe = { calls: [], failCommit: false, gate: null };
    const first = await start({ dataDir: dir, logBackend: probed(SqliteLogBackend.open(join(dir, 'log')), probe), snapshotRowsPerChunk: 1 });
    await fill(first, 0, 3);
    const good = await first.snapshotNow();
    await fill(first, 3, 3);
    probe.failCommit = true;
    probe.calls.length = 0;
    await assert.rejects(first.snapshotNow(), /simulated crash/);
    assert.ok(probe.calls.includes('write'));
    assert.ok(!probe.calls.some((c) => c.startsWith('compact')), probe.calls.join(' '));
    await fill(first, 6, 2);
    const want = digest(first.store);
    // The process dies here: the uncommitted chunks are still in the database.
    const reopened = SqliteLogBackend.open(join(dir, 'log'));
    const snap = await reopened.openLatestSnapshot();
    assert.equal(snap?.index, good);
    await reopened.close();
    const second = await start({ dataDir: dir, logBackend: SqliteLogBackend.open(join(dir, 'log')) });
    assert.deepEqual(digest(second.store), want);
    assert.equal(second.state.jobs('default').length, 8);
  });

  it('keeps applying writes while a snapshot is being written', async () => {
    const dir = tempDir();
    let open: () => void = () => undefined;
    const probe: Probe = { calls: [], failCommit: false, gate: null };
    const s = await start({ dataDir: dir, logBackend: probed(SqliteLogBackend.open(join(dir, 'log')), probe), snapshotRowsPerChunk: 1 });
    await fill(s, 0, 3);
    probe.gate = new Promise<void>((r) => (open = r));
    const snapshot = s.snapshotNow();
    // The snapshot is stuck on its first chunk; writes still go through.
    await fill(s, 3, 3);
    assert.equal(s.state.jobs('default').length, 6);
    open();
    probe.gate = null;
    const index = await snapshot;
    assert.ok(index < s.state.latestIndex());
    const want = digest(s.store);
    await s.close();
    const again = await start({ dataDir: dir, logBackend: SqliteLogBackend.open(join(dir, 'log')) });
    assert.deepEqual(digest(again.store), want);
  });

  it('takes snapshots on its own past the threshold and restores from them', async () => {
    const dir = tempDir();
    const probe: Probe = { calls: [], failCommit: false, gate: null };
    const seen: number[] = [];
    const s = await start({
      dataDir: dir,
      logBackend: probed(SqliteLogBackend.open(join(dir, 'log')), probe),
      snapshotThreshold: 5,
      snapshotRowsPerChunk: 2,
      onSnapshot: (st) => seen.push(st.index),
    });
    await fill(s, 0, 12);
    for (let i = 0; i < 50 && seen.length < 2; i++) await new Promise((r) => setImmediate(r));
    assert.ok(seen.length >= 2, `snapshots taken: ${seen.join(',')}`);
    const want = digest(s.store);
    await s.close();
    const again = await start({ dataDir: dir, logBackend: SqliteLogBackend.open(join(dir, 'log')) });
    assert.deepEqual(digest(again.store), want);
  });
});
