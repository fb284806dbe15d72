/**
 * A held request listens on the agent's shutdown signal through one fanned-out listener: with
 * thousands of blocking queries held (a fleet's allocation watches), the shutdown signal must not
 * carry a listener per request — an EventTarget scans them all on every add and remove, which
 * made each new watch cost O(held watches).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, getEventListeners } from 'node:events';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { requestSignal } from '../../src/http/route-context.js';
import { onAbort } from '../../src/http/abort-fanout.js';

/** A request and reply with just what requestSignal touches: the socket and the reply's close. */
function fakeExchange(): { req: FastifyRequest; reply: FastifyReply; close: () => void } {
  const socket = new EventEmitter();
  const raw = Object.assign(new EventEmitter(), { writableFinished: true });
  return {
    req: { raw: { socket } } as unknown as FastifyRequest,
    reply: { raw } as unknown as FastifyReply,
    close: () => raw.emit('close'),
  };
}

test('held requests share one listener on the shutdown signal, and shutdown aborts every one', () => {
  const shutdown = new AbortController();
  const held = Array.from({ length: 1000 }, () => {
    const x = fakeExchange();
    return { ...x, signal: requestSignal(x.req, x.reply, shutdown.signal) };
  });
  assert.ok(getEventListeners(shutdown.signal, 'abort').length <= 1, `${getEventListeners(shutdown.signal, 'abort').length} listeners on the shutdown signal`);
  // Answered requests leave the fan-out: shutting down later aborts only the ones still held.
  for (const h of held.slice(0, 400)) h.close();
  shutdown.abort(new Error('agent stopping'));
  assert.equal(held.filter((h) => h.signal.aborted).length, 600);
  assert.ok(held.slice(400).every((h) => (h.signal.reason as Error).message === 'agent stopping'));
});

test('onAbort: called at once on an aborted signal, once on abort, never after unsubscribing', () => {
  let calls = 0;
  const done = new AbortController();
  done.abort();
  onAbort(done.signal, () => calls++);
  assert.equal(calls, 1);
  const ac = new AbortController();
  let a = 0;
  let b = 0;
  onAbort(ac.signal, () => a++);
  const unsubscribe = onAbort(ac.signal, () => b++);
  unsubscribe();
  unsubscribe();
  ac.abort();
  ac.abort();
  assert.deepEqual([a, b], [1, 0]);
});
