/**
 * The warm pool on its own (no kernel): fills to its size one at a time, hands each item out
 * once, refills only when asked, stops after a failed create, and close() destroys the idle
 * items and anything a refill under way still makes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WarmPool } from '../../../src/client/network/warm-pool.js';

function counter(opts: { failAt?: number } = {}) {
  let n = 0;
  let running = 0;
  const log = { created: [] as number[], destroyed: [] as number[], maxConcurrent: 0, errors: 0 };
  const pool = new WarmPool<number>({
    size: 2,
    create: async () => {
      running++;
      log.maxConcurrent = Math.max(log.maxConcurrent, running);
      await new Promise((r) => setImmediate(r));
      running--;
      n++;
      if (n === opts.failAt) throw new Error('create failed');
      log.created.push(n);
      return n;
    },
    destroy: async (i) => {
      log.destroyed.push(i);
    },
    onError: () => log.errors++,
  });
  return { pool, log };
}

test('fills to its size one at a time; each item is handed out once; refills when asked', async () => {
  const { pool, log } = counter();
  assert.equal(pool.take(), undefined, 'nothing before the first fill');
  pool.fill();
  await pool.settled();
  assert.equal(pool.ready, 2);
  assert.equal(log.maxConcurrent, 1);
  assert.equal(pool.take(), 1);
  assert.equal(pool.ready, 1, 'a take does not refill by itself');
  pool.fill();
  await pool.settled();
  assert.deepEqual([pool.take(), pool.take(), pool.take()], [2, 3, undefined]);
  await pool.close();
  assert.deepEqual(log.destroyed, [], 'taken items belong to the taker');
});

test('a failed create stops the refill until the next fill', async () => {
  const { pool, log } = counter({ failAt: 2 });
  pool.fill();
  await pool.settled();
  assert.equal(pool.ready, 1);
  assert.equal(log.errors, 1);
  pool.fill();
  await pool.settled();
  assert.equal(pool.ready, 2);
  await pool.close();
});

test('close destroys the idle items and what a refill under way makes; nothing fills after it', async () => {
  const destroyed: number[] = [];
  let n = 0;
  let inFlight: () => void = () => undefined;
  const started = new Promise<void>((r) => (inFlight = r));
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const pool = new WarmPool<number>({
    size: 2,
    create: async () => {
      n++;
      if (n === 3) {
        inFlight();
        await gate;
      }
      return n;
    },
    destroy: async (i) => {
      destroyed.push(i);
    },
  });
  pool.fill();
  await pool.settled();
  assert.equal(pool.take(), 1);
  pool.fill();
  await started;
  const closing = pool.close();
  release();
  await closing;
  assert.equal(pool.ready, 0);
  assert.deepEqual(destroyed.sort(), [2, 3]);
  pool.fill();
  await pool.settled();
  assert.equal(n, 3, 'nothing is created after close');
});

test('a refill waits for beforeCreate before each create', async () => {
  let allowed = 0;
  let created = 0;
  let open: () => void = () => undefined;
  const pool = new WarmPool<number>({
    size: 1,
    create: async () => ++created,
    destroy: async () => undefined,
    beforeCreate: () => new Promise<void>((r) => (open = () => { allowed++; r(); })),
  });
  pool.fill();
  await new Promise((r) => setImmediate(r));
  assert.equal(created, 0, 'held back');
  open();
  await pool.settled();
  assert.equal(created, 1);
  assert.equal(allowed, 1);
});

test('size 0 never creates', async () => {
  let created = 0;
  const pool = new WarmPool<number>({ size: 0, create: async () => ++created, destroy: async () => undefined });
  pool.fill();
  await pool.settled();
  assert.equal(created, 0);
  assert.equal(pool.take(), undefined);
});
