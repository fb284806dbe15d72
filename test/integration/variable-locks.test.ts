/**
 * Variable locks through a real agent: acquire answers the lock's ID and refuses a second
 * holder with a 409; writes and deletes of a locked variable need the lock's ID (and still honour
 * check-and-set); renew and release need it too; a lock whose TTL passes is released by the
 * leader and the variable cannot be locked again during its LockDelay; a held lock survives a
 * restart of the agent and is renewed afterwards with the same ID.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Variable, VariableMetadata } from '../../src/structs/variable.js';
import { api, runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

test('variable locks: acquire, conflict, writes with the lock ID, CAS, renew, release, expiry with delay, restart', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-varlock-'));
  const dataDir = join(tmp, 'data');
  let agent: AgentProcess | undefined = await startAgent({ roleArgs: ['-server'], dataDir });
  try {
    let a = agent.address;
    const acquired = await api<Variable>(a, 'PUT', '/v1/var/locks/a?lock-acquire', { Items: { k: 'v' }, Lock: { TTL: '1h', LockDelay: '30s' } });
    assert.equal(acquired.status, 200, acquired.text);
    const lock = acquired.body.Lock!;
    assert.match(lock.ID, /^[0-9a-f-]{36}$/);
    assert.deepEqual([lock.TTL, lock.LockDelay, acquired.body.Items], ['1h0m0s', '30s', { k: 'v' }]);

    // Only one holder: a second acquire is a 409 carrying the variable (without the holder's ID).
    const second = await api<Variable>(a, 'PUT', '/v1/var/locks/a?lock-acquire', { Lock: { TTL: '10s' } });
    assert.equal(second.status, 409, second.text);
    assert.deepEqual([second.body.Path, second.body.Lock?.ID, second.body.Lock?.TTL], ['locks/a', '', '1h0m0s']);
    const read = await api<Variable>(a, 'GET', '/v1/var/locks/a');
    assert.deepEqual([read.body.Lock?.ID, read.body.Lock?.TTL], ['', '1h0m0s']);
    const listed = await api<VariableMetadata[]>(a, 'GET', '/v1/vars?prefix=locks');
    assert.deepEqual(listed.body.map((m) => [m.Path, m.Lock?.ID, m.Lock?.LockDelay]), [['locks/a', '', '30s']]);

    // Writes and deletes need the lock's ID; with it the write keeps the lock.
    const blind = await api<Variable>(a, 'PUT', '/v1/var/locks/a', { Items: { k: 'other' } });
    assert.equal(blind.status, 409, blind.text);
    assert.equal((await api(a, 'PUT', '/v1/var/locks/a', { Items: { k: 'other' }, Lock: { ID: 'not-the-lock' } })).status, 409);
    assert.equal((await api(a, 'DELETE', '/v1/var/locks/a')).status, 409);
    const mine = await api<Variable>(a, 'PUT', '/v1/var/locks/a', { Items: { k: 'mine' }, Lock: { ID: lock.ID } });
    assert.equal(mine.status, 200, mine.text);
    assert.deepEqual([mine.body.Items, mine.body.Lock?.ID], [{ k: 'mine' }, lock.ID]);
    // Check-and-set still applies to the holder: a stale index is a 409, the current one writes.
    const staleCas = await api(a, 'PUT', `/v1/var/locks/a?cas=${mine.body.ModifyIndex - 1}`, { Items: { k: 'cas' }, Lock: { ID: lock.ID } });
    assert.equal(staleCas.status, 409);
    const casOk = await api<Variable>(a, 'PUT', `/v1/var/locks/a?cas=${mine.body.ModifyIndex}`, { Items: { k: 'cas' }, Lock: { ID: lock.ID } });
    assert.equal(casOk.status, 200, casOk.text);
    assert.equal((await api<Variable>(a, 'GET', '/v1/var/locks/a')).body.Items['k'], 'cas');

    // Renew and release need the ID; bad input is a 400 naming it.
    assert.equal((await api(a, 'PUT', '/v1/var/locks/a?lock-renew', { Lock: { ID: 'nope' } })).status, 409);
    assert.match((await api(a, 'PUT', '/v1/var/locks/a?lock-renew', {})).text, /Lock\.ID is required/);
    assert.match((await api(a, 'PUT', '/v1/var/locks/b?lock-acquire', { Lock: { TTL: 'soon' } })).text, /Lock\.TTL: invalid duration "soon"/);
    assert.equal((await api(a, 'GET', '/v1/var/locks/b')).status, 404, 'a refused acquire creates nothing');
    const renewed = await api<VariableMetadata>(a, 'PUT', '/v1/var/locks/a?lock-renew', { Path: 'locks/a', Lock: { ID: lock.ID } });
    assert.equal(renewed.status, 200, renewed.text);
    assert.equal(renewed.body.Lock?.ID, lock.ID);
    assert.ok(!('Items' in renewed.body), 'a renewal answers the metadata');

    // The lock survives a restart (replicated state) and is renewed with the same ID afterwards.
    await agent.stop();
    agent = await startAgent({ roleArgs: ['-server'], dataDir });
    a = agent.address;
    assert.equal((await api<Variable>(a, 'GET', '/v1/var/locks/a')).body.Lock?.TTL, '1h0m0s');
    assert.equal((await api(a, 'PUT', '/v1/var/locks/a?lock-acquire', {})).status, 409);
    assert.equal((await api(a, 'PUT', '/v1/var/locks/a?lock-renew', { Lock: { ID: lock.ID } })).status, 200);

    assert.equal((await api(a, 'PUT', '/v1/var/locks/a?lock-release', { Lock: { ID: 'nope' } })).status, 409);
    const released = await api<Variable>(a, 'PUT', '/v1/var/locks/a?lock-release', { Lock: { ID: lock.ID } });
    assert.equal(released.status, 200, released.text);
    assert.equal(released.body.Lock, undefined);
    assert.deepEqual(released.body.Items, { k: 'cas' }, 'a release keeps the items');
    assert.equal((await api(a, 'PUT', '/v1/var/locks/a', { Items: { k: 'free' } })).status, 200, 'unlocked: anyone may write');
    // No delay after an explicit release.
    const again = await api<Variable>(a, 'PUT', '/v1/var/locks/a?lock-acquire', { Lock: { TTL: '1h', LockDelay: '1s' } });
    assert.equal(again.status, 200, again.text);
    assert.deepEqual(again.body.Items, { k: 'free' }, 'an acquire without items keeps them');
    assert.equal((await api(a, 'DELETE', `/v1/var/locks/a?lock-id=${again.body.Lock!.ID}`)).status, 204);

    // Expiry: the leader releases a lock whose TTL passed; then LockDelay must pass before anyone may acquire.
    const short = await api<Variable>(a, 'PUT', '/v1/var/locks/exp?lock-acquire', { Items: { x: '1' }, Lock: { TTL: '1s', LockDelay: '1h' } });
    assert.equal(short.status, 200, short.text);
    await waitUntil('the lock expired', async () => (await api<Variable>(a, 'GET', '/v1/var/locks/exp')).body.Lock === undefined, 30_000);
    const inDelay = await api<Variable>(a, 'PUT', '/v1/var/locks/exp?lock-acquire', { Lock: { TTL: '10s' } });
    assert.equal(inDelay.status, 409, 'the lock delay holds after an expiry');
    assert.equal((await api(a, 'PUT', '/v1/var/locks/exp?lock-renew', { Lock: { ID: short.body.Lock!.ID } })).status, 409, 'an expired lock cannot be renewed');
    // A short delay passes, and the lock can be taken again.
    const brief = await api<Variable>(a, 'PUT', '/v1/var/locks/brief?lock-acquire', { Items: { x: '1' }, Lock: { TTL: '1s', LockDelay: '1s' } });
    assert.equal(brief.status, 200, brief.text);
    await waitUntil('the brief lock expired', async () => (await api<Variable>(a, 'GET', '/v1/var/locks/brief')).body.Lock === undefined, 30_000);
    await waitUntil('the brief lock taken again after its delay', async () => (await api(a, 'PUT', '/v1/var/locks/brief?lock-acquire', { Lock: { TTL: '1h' } })).status === 200, 30_000);
  } finally {
    await agent?.stop();
    await rm(tmp, { recursive: true, force: true });
  }
});

test('caravan var lock: holds the lock while the child runs, renews it, releases it on exit; -early-return; a failing child', async () => {
  const tmp = await mkdtemp(join(tmpdir(), 'caravan-it-varlock-cli-'));
  const agent = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 'data') });
  try {
    const a = agent.address;
    const go = join(tmp, 'go');
    // The child waits for the test's signal, past renewals of a 4s TTL.
    const script = `echo held; while [ ! -f ${go} ]; do sleep 0.1; done; echo done`;
    const holder = runCli(a, ['var', 'lock', '-ttl', '4s', '-delay', '1s', '-shell=false', 'locks/cli', '/bin/sh', '-c', script]);
    await waitUntil('the variable locked by var lock', async () => (await api<Variable>(a, 'GET', '/v1/var/locks/cli')).body.Lock !== undefined, 30_000);
    // Held past its TTL: the renewals keep it.
    await new Promise((r) => setTimeout(r, 5000));
    assert.notEqual((await api<Variable>(a, 'GET', '/v1/var/locks/cli')).body.Lock, undefined, 'renewed past its TTL');
    const early = await runCli(a, ['var', 'lock', '-early-return', 'locks/cli', 'echo', 'should-not-run']);
    assert.deepEqual([early.code, early.stdout], [0, ''], early.stderr);
    await writeFile(go, '');
    const done = await holder;
    assert.equal(done.code, 0, done.stderr);
    assert.equal(done.stdout, 'held\ndone\n');
    assert.equal((await api<Variable>(a, 'GET', '/v1/var/locks/cli')).body.Lock, undefined, 'released on exit');

    const failing = await runCli(a, ['var', 'lock', 'locks/cli', 'exit', '3']);
    assert.equal(failing.code, 1);
    assert.match(failing.stderr, /Lock error: .*exit status 3/);
    assert.equal((await api<Variable>(a, 'GET', '/v1/var/locks/cli')).body.Lock, undefined, 'released after a failing child too');

    // A specification names the variable and gives the items it is created with.
    await writeFile(join(tmp, 'lock.nv.hcl'), 'path = "locks/spec"\nitems {\n  owner = "ci"\n}\n');
    const specced = await runCli(a, ['var', 'lock', `@${join(tmp, 'lock.nv.hcl')}`, 'echo', 'ran']);
    assert.deepEqual([specced.code, specced.stdout], [0, 'ran\n'], specced.stderr);
    const created = (await api<Variable>(a, 'GET', '/v1/var/locks/spec')).body;
    assert.deepEqual([created.Items, created.Lock], [{ owner: 'ci' }, undefined]);
  } finally {
    await agent.stop();
    await rm(tmp, { recursive: true, force: true });
  }
});
