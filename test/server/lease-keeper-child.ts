/**
 * Run as a child process by worker-lease-keeper.test.ts: keeps a lease alive with a
 * WorkerLeaseKeeper until etcd confirms it, then lets go of everything but the keeper (never
 * closed). It exits on its own only if the keeper's worker does not keep the process alive.
 */
import { openEtcdClient } from '../../src/server/etcd/etcd-connection.js';
import { WorkerLeaseKeeper } from '../../src/server/etcd/worker-lease-keeper.js';
import { monotonicMs } from '../../src/server/etcd/monotonic-ms.js';

const endpoint = process.argv[2]!;
// Holds the process while it waits (the worker itself does not).
const hold = setInterval(() => undefined, 1000);
const client = openEtcdClient({ endpoints: [endpoint] });
const keeper = new WorkerLeaseKeeper({ config: { endpoints: [endpoint] }, ttlMs: 1000 });
await keeper.open();
const grantedAt = monotonicMs();
const id = String((await client.leaseClient.leaseGrant({ TTL: 1 })).ID);
client.close();
keeper.keep(id, grantedAt, (err) => process.stdout.write(`lost ${err.code}\n`));
while ((keeper.confirmedAt(id) ?? 0) <= grantedAt) await new Promise((r) => setTimeout(r, 20));
process.stdout.write('confirmed\n');
clearInterval(hold);
