/**
 * ACL objects are replicated state: written through the log, rebuilt on restart from the log
 * and from a snapshot, with the bootstrap's reset index kept.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Server } from '../../src/server/server.js';
import { fakeSchedulerFactory } from './fake-scheduler.js';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const open = (dataDir: string) => Server.open({ dataDir, numWorkers: 0, schedulerFactory: () => fakeSchedulerFactory });

for (const viaSnapshot of [false, true]) {
  test(`tokens, policies, roles and the bootstrap index survive a restart (${viaSnapshot ? 'from a snapshot' : 'from the log'})`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-acl-state-'));
    dirs.push(dir);
    const first = await open(dir);
    const mgmt = await first.acl.bootstrap();
    await first.acl.upsertPolicy('readers', { Rules: 'namespace "default" { policy = "read" }', Description: 'd' });
    const role = await first.acl.upsertRole({ Name: 'r', Policies: [{ Name: 'readers' }] });
    const client = await first.acl.upsertToken({ Name: 'c', Type: 'client', Roles: [{ ID: role.ID }] });
    if (viaSnapshot) await first.snapshotNow();
    await first.close();

    const second = await open(dir);
    try {
      const t = second.acl.tables;
      assert.equal(t.tokenBySecret(mgmt.SecretID)?.AccessorID, mgmt.AccessorID);
      assert.equal(t.tokenBySecret(client.SecretID)?.Name, 'c');
      assert.equal(t.policy('readers')?.Description, 'd');
      assert.equal(t.roleByName('r')?.ID, role.ID);
      assert.equal(t.bootstrapIndex, mgmt.CreateIndex);
      await assert.rejects(second.acl.bootstrap(), /ACL bootstrap already done \(reset index: \d+\)/);
      const resolved = await second.acl.resolve(client.SecretID);
      assert.ok(resolved.acl.allowNamespaceOperation('default', 'read-job'), 'the role grants its policy after restart');
      assert.ok(!resolved.acl.allowNamespaceOperation('default', 'submit-job'));
    } finally {
      await second.close();
    }
  });
}
