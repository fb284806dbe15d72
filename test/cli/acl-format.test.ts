import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatToken } from '../../src/cli/commands/acl-format.js';
import type { AclToken } from '../../src/structs/acl.js';

const token: AclToken = {
  AccessorID: 'a1', SecretID: 's1', Name: 'ci', Type: 'client', Policies: ['readonly'], Roles: [], Global: false, Hash: 'h',
  CreateTime: '2026-11-27T15:34:19.123456789Z', ExpirationTime: '2026-11-28T15:34:19.5Z', ExpirationTTL: 0,
  CreateIndex: 7, ModifyIndex: 7,
};

test('acl token info prints its times as every other command does: RFC 3339 in whole seconds', () => {
  const out = formatToken(token);
  assert.match(out, /^Create Time\s+= 2026-11-27T15:34:19Z$/m);
  assert.match(out, /^Expiry Time\s+= 2026-11-28T15:34:19Z$/m);
  assert.match(formatToken({ ...token, ExpirationTime: null }), /^Expiry Time\s+= <none>$/m);
});
