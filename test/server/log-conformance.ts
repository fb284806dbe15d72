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
