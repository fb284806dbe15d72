/**
 * The fault suite's linearizability checker (bench/faults): known-linearizable and
 * known-violating register histories.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkRegister, checkRegisters, type RegisterOp } from '../../bench/faults/register-linearizability.js';

const w = (value: string, call: number, ret: number, key = 'k'): RegisterOp => ({ key, kind: 'write', value, call, ret });
const r = (value: string | null, call: number, ret: number, key = 'k'): RegisterOp => ({ key, kind: 'read', value, call, ret });

test('linearizable: sequential writes and reads, a read overlapping a write seeing either value', () => {
  assert.equal(checkRegister([r(null, 0, 1), w('a', 2, 3), r('a', 4, 5), w('b', 6, 10), r('a', 7, 8), r('b', 9, 12), r('b', 13, 14)]), true);
  // Two overlapping writes: reads after both may see either, but must then agree.
  assert.equal(checkRegister([w('a', 0, 10), w('b', 1, 9), r('a', 11, 12), r('a', 13, 14)]), true);
  assert.equal(checkRegister([w('a', 0, 10), w('b', 1, 9), r('b', 11, 12), r('b', 13, 14)]), true);
});

test('linearizable: a write with an unknown outcome may take effect late, or never', () => {
  assert.equal(checkRegister([w('a', 0, 1), w('b', 2, Infinity), r('a', 3, 4), r('b', 5, 6), r('b', 7, 8)]), true);
  assert.equal(checkRegister([w('a', 0, 1), w('b', 2, Infinity), r('a', 3, 4), r('a', 5, 6)]), true);
});

test('violations: a stale read after a newer read, a read of a value never written, a lost acknowledged write', () => {
  // Once a read saw b (written after a), a later read may not see a again.
  assert.equal(checkRegister([w('a', 0, 1), w('b', 2, 3), r('b', 4, 5), r('a', 6, 7)]), false);
  assert.equal(checkRegister([w('a', 0, 1), r('z', 2, 3)]), false);
  // b acknowledged before the read began: the read must see it.
  assert.equal(checkRegister([w('a', 0, 1), w('b', 2, 3), r('a', 4, 5)]), false);
  // Before any write the register is empty.
  assert.equal(checkRegister([r('a', 0, 1), w('a', 2, 3)]), false);
  // An unknown write that was seen cannot be unseen.
  assert.equal(checkRegister([w('a', 0, 1), w('b', 2, Infinity), r('b', 3, 4), r('a', 5, 6)]), false);
});

test('keys are checked apart and the violating ones named', () => {
  const history = [w('a', 0, 1, 'x'), r('a', 2, 3, 'x'), w('a', 0, 1, 'y'), w('b', 2, 3, 'y'), r('a', 4, 5, 'y')];
  const res = checkRegisters(history);
  assert.equal(res.keys, 2);
  assert.deepEqual(res.violations.map((v) => v.key), ['y']);
  assert.deepEqual(res.unknown, []);
});

test('a larger concurrent history is decided quickly', () => {
  // 10 writers and readers interleaved on one key, each read seeing the latest completed write.
  const ops: RegisterOp[] = [];
  let t = 0;
  for (let i = 0; i < 60; i++) {
    ops.push(w(`v${i}`, t, t + 5));
    ops.push(r(i === 0 ? null : `v${i - 1}`, t + 1, t + 2));
    t += 3;
  }
  const started = Date.now();
  assert.equal(checkRegister(ops), true);
  assert.ok(Date.now() - started < 5000);
});

test('many unanswered writes nobody read are decided at once; one that was read still counts', () => {
  const ops: RegisterOp[] = [w('a', 0, 1)];
  for (let i = 0; i < 200; i++) ops.push(w(`lost-${i}`, 2 + i, Infinity));
  ops.push(r('a', 300, 301));
  assert.equal(checkRegister(ops), true);
  ops.push(r('lost-7', 302, 303), r('a', 304, 305));
  assert.equal(checkRegister(ops), false, 'lost-7 was seen, so a cannot be read after it');
});
