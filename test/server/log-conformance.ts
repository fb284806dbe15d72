/**
 * The conformance suite every LogBackend passes: ordering, durability across reopen, grouped
 * concurrent appends, snapshots and compaction. Call runLogConformance with a factory.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { LogBackend } from '../../src/server/log/log-backend.js';
import { LogError } from '../../src/server/log/log-backend.js';

/** Opens a backend; `reopen` opens the same storage again after close (durability). */
export interface LogBackendFactory {
  name: string;
  open(): Promise<{ backend: LogBackend; reopen: () => Promise<LogBackend>; cleanup: () => Promise<void> }>;
}

export function runLogConformance(factory: LogBackendFactory): void {
  describe(`log backend conformance: ${factory.name}`, () => {
    it('assigns gap-free increasing indexes in call order, also for concurrent appends', async () => {
      const { backend, cleanup } = await factory.open();
      try {
        const results = await Promise.all([
          backend.append([{ type: 'a', payload: '1' }]),
          backend.append([{ type: 'b', payload: '2' }, { type: 'c', payload: '3' }]),
          backend.append([{ type: 'd', payload: '4' }]),
        ]);
        assert.deepEqual(results, [[1], [2, 3], [4]]);
        assert.equal(await backend.lastIndex(), 4);
        const entries = await backend.read(1);
        assert.deepEqual(entries.map((e) => [e.index, e.type, e.payload]), [
          [1, 'a', '1'],
          [2, 'b', '2'],
          [3, 'c', '3'],
          [4, 'd', '4'],
        ]);
        assert.deepEqual((await backend.read(2, 3)).map((e) => e.index), [2, 3]);
      } finally {
        await backend.close();
        await cleanup();
      }
    });

    it('keeps acknowledged entries and snapshots across reopen', async () => {
      const { backend, reopen, cleanup } = await factory.open();
      try {
        await backend.append([{ type: 'x', payload: '{"a":1}' }]);
        await backend.append([{ type: 'y', payload: '{"b":2}' }]);
        await backend.saveSnapshot(1, Buffer.from('snap-at-1'));
        await backend.close();
        const again = await reopen();
        try {
          assert.equal(await again.lastIndex(), 2);
          const snap = await again.loadLatestSnapshot();
          assert.equal(snap?.index, 1);
          assert.equal(snap?.data.toString(), 'snap-at-1');
          assert.deepEqual((await again.read(2)).map((e) => e.payload), ['{"b":2}']);
          assert.deepEqual(await again.append([{ type: 'z', payload: '' }]), [3]);
        } finally {
          await again.close();
        }
      } finally {
        await cleanup();
      }
    });

    it('compacts covered entries but keeps numbering', async () => {
      const { backend, cleanup } = await factory.open();
      try {
        for (let i = 0; i < 5; i++) await backend.append([{ type: 't', payload: String(i) }]);
        await backend.saveSnapshot(3, Buffer.from('s3'));
        await backend.saveSnapshot(4, Buffer.from('s4'));
        await backend.compact(3);
        assert.deepEqual((await backend.read(1)).map((e) => e.index), [4, 5]);
        assert.equal((await backend.loadLatestSnapshot())?.index, 4);
        assert.deepEqual(await backend.append([{ type: 't', payload: '6' }]), [6]);
      } finally {
        await backend.close();
        await cleanup();
      }
    });

    it('a chunked snapshot is invisible until committed and reads back chunk by chunk', async (t) => {
      const { backend, cleanup } = await factory.open();
      try {
        if (!backend.beginSnapshot || !backend.openLatestSnapshot) {
          t.skip('backend has no chunked snapshots');
          return;
        }
        for (let i = 0; i < 4; i++) await backend.append([{ type: 't', payload: String(i) }]);
        await backend.saveSnapshot(1, Buffer.from('one'));
        const sink = await backend.beginSnapshot(3);
        await sink.write(Buffer.from('a-'));
        await sink.write(Buffer.from('b-'));
        await sink.write(Buffer.from('c'));
        assert.equal((await backend.loadLatestSnapshot())?.index, 1);
        assert.equal((await backend.openLatestSnapshot())?.index, 1);
        await sink.commit();
        const src = await backend.openLatestSnapshot();
        assert.equal(src?.index, 3);
        const chunks: string[] = [];
        for await (const c of src!.chunks()) chunks.push(c.toString());
        assert.deepEqual(chunks, ['a-', 'b-', 'c']);
        assert.equal((await backend.loadLatestSnapshot())?.data.toString(), 'a-b-c');
        // An aborted one never shows.
        const dropped = await backend.beginSnapshot(4);
        await dropped.write(Buffer.from('x'));
        await dropped.abort();
        assert.equal((await backend.loadLatestSnapshot())?.index, 3);
      } finally {
        await backend.close();
        await cleanup();
      }
    });

    it('chunks written but not committed before a crash leave the previous snapshot', async (t) => {
      const { backend, reopen, cleanup } = await factory.open();
      try {
        if (!backend.beginSnapshot) {
          t.skip('backend has no chunked snapshots');
          await backend.close();
          return;
        }
        for (let i = 0; i < 3; i++) await backend.append([{ type: 't', payload: String(i) }]);
        await backend.saveSnapshot(2, Buffer.from('two'));
        const sink = await backend.beginSnapshot(3);
        // Large enough that a backend buffering chunks has put some of them in storage.
        await sink.write(Buffer.alloc(17 * 1024 * 1024, 0x61));
        await sink.write(Buffer.from('three'));
        // No commit: the process goes away.
        await backend.close();
        const again = await reopen();
        try {
          const snap = await again.loadLatestSnapshot();
          assert.equal(snap?.index, 2);
          assert.equal(snap?.data.toString(), 'two');
          assert.equal(await again.lastIndex(), 3);
          const next = await again.beginSnapshot!(3);
          await next.write(Buffer.from('three'));
          await next.commit();
          assert.equal((await again.loadLatestSnapshot())?.data.toString(), 'three');
        } finally {
          await again.close();
        }
      } finally {
        await cleanup();
      }
    });

    it('delivers the backlog and then every committed entry, in order, to a subscriber', async () => {
      const { backend, cleanup } = await factory.open();
      try {
        await backend.append([{ type: 'a', payload: '1' }, { type: 'b', payload: '2' }]);
        const seen: number[] = [];
        let failed: unknown = null;
        const stop = backend.subscribe(2, { onEntries: (es) => seen.push(...es.map((e) => e.index)), onError: (e) => (failed = e) });
        await Promise.all([backend.append([{ type: 'c', payload: '3' }]), backend.append([{ type: 'd', payload: '4' }])]);
        await waitFor(() => seen.length >= 3);
        assert.deepEqual(seen, [2, 3, 4]);
        stop();
        await backend.append([{ type: 'e', payload: '5' }]);
        await new Promise((r) => setTimeout(r, 50));
        assert.deepEqual(seen, [2, 3, 4], 'nothing after unsubscribe');
        assert.equal(failed, null);
      } finally {
        await backend.close();
        await cleanup();
      }
    });

    it('tells a subscriber that starts before the compacted index with LOG_COMPACTED', async () => {
      const { backend, cleanup } = await factory.open();
      try {
        for (let i = 0; i < 4; i++) await backend.append([{ type: 't', payload: String(i) }]);
        await backend.saveSnapshot(3, Buffer.from('s3'));
        await backend.compact(3);
        const err = await new Promise<unknown>((resolve) => {
          backend.subscribe(2, { onEntries: () => undefined, onError: resolve });
        });
        assert.ok(err instanceof LogError && err.code === 'LOG_COMPACTED');
        const seen: number[] = [];
        const stop = backend.subscribe(4, { onEntries: (es) => seen.push(...es.map((e) => e.index)), onError: () => undefined });
        await waitFor(() => seen.length >= 1);
        assert.deepEqual(seen, [4]);
        stop();
      } finally {
        await backend.close();
        await cleanup();
      }
    });

    it('rejects use after close with LOG_CLOSED', async () => {
      const { backend, cleanup } = await factory.open();
      await backend.close();
      await assert.rejects(backend.append([{ type: 't', payload: '' }]), (e: unknown) => e instanceof LogError && e.code === 'LOG_CLOSED');
      await cleanup();
    });

    it('returns null when there is no snapshot and empty reads on an empty log', async () => {
      const { backend, cleanup } = await factory.open();
      try {
        assert.equal(await backend.loadLatestSnapshot(), null);
        assert.deepEqual(await backend.read(1), []);
        assert.equal(await backend.lastIndex(), 0);
      } finally {
        await backend.close();
        await cleanup();
      }
    });
  });
}

/** Polls until `cond` holds (a subscription delivers asynchronously); fails after 5 s. */
async function waitFor(cond: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail('timed out waiting for delivery');
    await new Promise((r) => setTimeout(r, 5));
  }
}
