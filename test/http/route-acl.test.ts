/**
 * Every route declares what it needs of the caller's token (src/http/acl/route-acl.ts): this
 * test fails when one declares nothing — add `acl.ns('read-job')`, `acl.rule('node', 'read')`,
 * `acl.management()`, `acl.public()`, … to the route's options.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHttpServer, routeAclDeclarations } from '../../src/http/http-server.js';
import { ServerProxy } from '../../src/http/forward-to-server/server-proxy.js';
import { startServer } from './real-server.js';

test('every route of a server agent declares its ACL need, with ACLs on and off', async () => {
  for (const enabled of [false, true]) {
    const sut = await startServer({ acl: { enabled } });
    try {
      await sut.app.ready();
      const all = routeAclDeclarations(sut.app);
      assert.ok(all.length > 40, `routes seen: ${all.length}`);
      const undeclared = all.filter((r) => r.need === undefined).map((r) => `${String(r.method)} ${r.url}`);
      assert.deepEqual(undeclared, [], `routes without an ACL declaration (acl ${enabled ? 'on' : 'off'})`);
      if (enabled) assert.ok(all.some((r) => r.url === '/v1/acl/token/:accessor'), 'the ACL routes are registered with ACLs on');
    } finally {
      await sut.close();
    }
  }
});

test('every route of a client-only agent declares its ACL need', async () => {
  const app = createHttpServer({ serverProxy: new ServerProxy({ servers: ['127.0.0.1:1'] }), acl: { enabled: true } });
  try {
    await app.ready();
    const undeclared = routeAclDeclarations(app).filter((r) => r.need === undefined).map((r) => `${String(r.method)} ${r.url}`);
    assert.deepEqual(undeclared, []);
  } finally {
    await app.close();
  }
});
