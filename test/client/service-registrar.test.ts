import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ServiceRegistrar } from '../../src/client/serviceregistration/service-registrar.js';
import { ClientError, ClientErrorCode } from '../../src/client/client-error.js';
import type { ServiceRegistrationInput } from '../../src/structs/service-registration.js';
import { FakeClock } from '../../src/time/clock.js';

const reg = (alloc: string, name: string, port = 80): ServiceRegistrationInput => ({
  ID: `_nomad-task-${alloc}-t-${name}-http`, ServiceName: name, Namespace: 'default', NodeID: 'n', Datacenter: 'dc1', JobID: 'j', AllocID: alloc, Tags: null, Address: '127.0.0.1', Port: port,
});

function writer(fail: () => Error | null = () => null) {
  const calls: string[] = [];
  return {
    calls,
    registerServices: async (s: ServiceRegistrationInput[]) => {
      const e = fail();
      if (e) throw e;
      calls.push(`+${s.map((r) => `${r.ServiceName}:${r.Port}`).join(',')}`);
    },
    deregisterServices: async (ids: string[]) => {
      const e = fail();
      if (e) throw e;
      calls.push(`-${ids.length}`);
    },
  };
}

test('the registrar writes only the difference, deregisters what went away, and resyncs after a node registration', async () => {
  const w = writer();
  const r = new ServiceRegistrar(w, new FakeClock(), pino({ level: 'silent' }));
  r.set('a1', [reg('a1', 'web')]);
  await r.settled();
  r.set('a1', [reg('a1', 'web')]);
  await r.settled();
  assert.deepEqual(w.calls, ['+web:80'], 'an unchanged set writes nothing');
  r.set('a1', [reg('a1', 'web', 81), reg('a1', 'api')]);
  await r.settled();
  r.set('a1', [reg('a1', 'api')]);
  await r.settled();
  assert.deepEqual(w.calls.slice(1), ['+web:81,api:80', '-1']);
  r.resync();
  await r.settled();
  assert.deepEqual(w.calls.slice(3), ['+api:80']);
  r.set('a1', []);
  await r.settled();
  assert.deepEqual(w.calls.slice(4), ['-1']);
  assert.deepEqual(r.registered('a1'), []);
});

test('a failed write is retried; a refused one waits for the next resync', async () => {
  const clock = new FakeClock();
  let failures = 1;
  let refuse = false;
  const w = writer(() => (refuse ? new ClientError(ClientErrorCode.ServerRejected, 'no') : failures-- > 0 ? new Error('unreachable') : null));
  const r = new ServiceRegistrar(w, clock, pino({ level: 'silent' }));
  r.set('a1', [reg('a1', 'web')]);
  await clock.advanceAsync(1_000);
  await r.settled();
  assert.deepEqual(w.calls, ['+web:80']);
  refuse = true;
  r.set('a2', [reg('a2', 'db')]);
  await r.settled();
  assert.deepEqual(r.registered('a2'), []);
  refuse = false;
  r.resync();
  await r.settled();
  assert.deepEqual(r.registered('a2'), ['_nomad-task-a2-t-db-http']);
});
