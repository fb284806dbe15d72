/**
 * etcd's footprint as metrics (issue 33, item 4): the database size, the part in use and the
 * cluster's keys, read at scrape time; absent on a server without etcd and while etcd does not answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpMetrics } from '../../src/http/http-metrics.js';
import { StateStore } from '../../src/server/state/state-store.js';
import type { ServerApi } from '../../src/server/server-api.js';
import type { LogStorageStatus } from '../../src/server/log/log-backend.js';

function serverWith(status: (() => Promise<LogStorageStatus | null>) | undefined): ServerApi {
  return { state: new StateStore(), ...(status ? { logStorageStatus: status } : {}) } as unknown as ServerApi;
}

test('metrics: etcd database size, size in use and keys, labelled by prefix, one etcd read per scrape', async () => {
  let reads = 0;
  const m = new HttpMetrics(() =>
    serverWith(async () => {
      reads++;
      return { prefix: '/caravan/', dbSizeBytes: 4096000, dbSizeInUseBytes: 1024000, keys: 42 };
    }),
  );
  const text = await m.prometheus();
  assert.match(text, /^caravan_etcd_db_size_bytes\{prefix="\/caravan\/"\} 4096000$/m);
  assert.match(text, /^caravan_etcd_db_size_in_use_bytes\{prefix="\/caravan\/"\} 1024000$/m);
  assert.match(text, /^caravan_etcd_keys\{prefix="\/caravan\/"\} 42$/m);
  assert.equal(reads, 1);
});

test('metrics: no etcd figures on a server without etcd, nor when etcd fails or does not answer', async () => {
  for (const status of [undefined, async () => null, async () => Promise.reject(new Error('etcd down')), () => new Promise<never>(() => undefined)]) {
    const text = await new HttpMetrics(() => serverWith(status)).prometheus();
    assert.doesNotMatch(text, /^caravan_etcd_\w+\{/m);
    assert.match(text, /^caravan_state_jobs 0$/m, 'the other metrics are there');
  }
});
