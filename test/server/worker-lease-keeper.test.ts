/**
 * WorkerLeaseKeeper against a real one-member etcd: a kept lease is confirmed from the worker
 * thread; a lease etcd revoked is reported lost (ETCD_LEASE_LOST); a worker that dies reports
 * what it kept lost as the server's own error (ETCD_LEASE_KEEPER_FAILED) and the next keep()
 * starts another; and the worker never keeps a process alive by itself.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Etcd3 } from 'etcd3';
import type { Worker } from 'node:worker_threads';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { WorkerLeaseKeeper } from '../../src/server/etcd/worker-lease-keeper.js';
import { monotonicMs } from '../../src/server/etcd/monotonic-ms.js';
import type { LeaseLossError } from '../../src/server/etcd/lease-keeper.js';
import { CaravanError } from '../../src/structs/caravan-error.js';

let etcd: EtcdCluster;
let client: Etcd3;
before(async () => {
  etcd = await EtcdCluster.start(1);
  client = openEtcdClient({ endpoints: etcd.endpoints });
});
after(async () => {
  client?.close();
  await etcd?.stop();
});

async function waitFor<T>(what: string, probe: () => T | undefined | null | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function grant(): Promise<{ id: string; grantedAt: number }> {
  const grantedAt = monotonicMs();
  return { id: String((await client.leaseClient.leaseGrant({ TTL: 1 })).ID), grantedAt };
}

describe('worker lease keeper', () => {
  it('confirms a kept lease; reports one etcd revoked as lost; a dead worker is an error of ours and the next keep starts another', async () => {
    const keeper = new WorkerLeaseKeeper({ config: { endpoints: etcd.endpoints }, ttlMs: 1000 });
    try {
      await keeper.open();
      const a = await grant();
      const lostA: LeaseLossError[] = [];
      keeper.keep(a.id, a.grantedAt, (err) => lostA.push(err));
      await waitFor('a confirmation of a', () => (keeper.confirmedAt(a.id) ?? 0) > a.grantedAt);
      // Kept past its TTL: etcd still has it.
      await new Promise((r) => setTimeout(r, 1500));
      // (etcd answers -1 for an expired lease, whole seconds left otherwise: 0 is alive.)
      assert.ok(Number((await client.leaseClient.leaseTimeToLive({ ID: a.id })).TTL) >= 0, 'a outlived its TTL');

      await client.leaseClient.leaseRevoke({ ID: a.id });
      const lost = await waitFor('a reported lost', () => lostA[0]);
      assert.ok(lost instanceof CaravanError && lost.code === 'ETCD_LEASE_LOST', `lost with ${lost.code}`);
      assert.equal(keeper.confirmedAt(a.id), null, 'a lost lease is no longer kept');

      const b = await grant();
      const lostB: LeaseLossError[] = [];
      keeper.keep(b.id, b.grantedAt, (err) => lostB.push(err));
      await waitFor('a confirmation of b', () => (keeper.confirmedAt(b.id) ?? 0) > b.grantedAt);
      await (keeper as unknown as { worker: Worker }).worker.terminate();
      const failed = await waitFor('b reported lost with the worker', () => lostB[0]);
      assert.ok(failed instanceof CaravanError && failed.code === 'ETCD_LEASE_KEEPER_FAILED', `lost with ${failed.code}`);
      assert.equal(lostB.length, 1);

      await keeper.open(); // a new worker (the leadership grants only once it is ready)
      const c = await grant();
      keeper.keep(c.id, c.grantedAt, () => undefined);
      await waitFor('a confirmation of c by a new worker', () => (keeper.confirmedAt(c.id) ?? 0) > c.grantedAt);
    } finally {
      await keeper.close();
    }
  });

  it('does not keep a process alive: one whose keeper was never closed exits by itself', async () => {
    const child = spawn(process.execPath, [fileURLToPath(new URL('./lease-keeper-child.js', import.meta.url)), etcd.endpoints[0]!], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | string>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve('still running after 30 s');
      }, 30_000);
      child.on('exit', (c, sig) => {
        clearTimeout(t);
        resolve(c ?? String(sig));
      });
    });
    assert.equal(code, 0, `the process exits by itself (output: ${out})`);
    assert.equal(out, 'confirmed\n');
  });
});
