/**
 * The admission of a new node's registration under each enforcement level, one row per case:
 * "none" admits everything silently; "warn" admits a registration without a token with a
 * warning but refuses a bad token; "strict" refuses anything but a valid, matching token.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { IntroductionClaims, IntroductionEnforcement } from '../../../src/structs/client-introduction.js';
import { introductionVerdict, type PresentedIntroduction } from '../../../src/server/introduction/introduction-verdict.js';

const node = { ID: 'node-1', Name: 'web-1', NodePool: 'default' };
const claims = (over: Partial<IntroductionClaims> = {}): IntroductionClaims => ({
  aud: 'nomadproject.io',
  exp: 2,
  iat: 1,
  nbf: 1,
  jti: 'j',
  sub: 'node-introduction:global:default:web-1:default',
  nomad_node_pool: 'default',
  nomad_node_name: 'web-1',
  ...over,
});

const none: PresentedIntroduction = { kind: 'none' };
const valid = (over: Partial<IntroductionClaims> = {}): PresentedIntroduction => ({ kind: 'valid', claims: claims(over) });
const invalid: PresentedIntroduction = { kind: 'invalid', problem: 'has expired' };

const rows: { name: string; enforcement: IntroductionEnforcement; presented: PresentedIntroduction; allowed: boolean; log?: 'warn' | 'error'; reason?: RegExp }[] = [
  { name: 'none: no token', enforcement: 'none', presented: none, allowed: true },
  { name: 'none: a bad token is not even looked at', enforcement: 'none', presented: invalid, allowed: true },
  { name: 'warn: no token is admitted with a warning', enforcement: 'warn', presented: none, allowed: true, log: 'warn', reason: /no introduction token/ },
  { name: 'warn: a valid matching token', enforcement: 'warn', presented: valid(), allowed: true },
  { name: 'warn: an expired token is refused', enforcement: 'warn', presented: invalid, allowed: false, log: 'error', reason: /introduction token has expired/ },
  { name: 'warn: a token of another pool is refused', enforcement: 'warn', presented: valid({ nomad_node_pool: 'prod' }), allowed: false, log: 'error', reason: /node pool "prod", not "default"/ },
  { name: 'strict: no token is refused', enforcement: 'strict', presented: none, allowed: false, log: 'error', reason: /no introduction token \(client_introduction enforcement is "strict"\)/ },
  { name: 'strict: a valid matching token', enforcement: 'strict', presented: valid(), allowed: true },
  { name: 'strict: a token bound to no name fits any name', enforcement: 'strict', presented: valid({ nomad_node_name: '' }), allowed: true },
  { name: 'strict: a token of another name is refused', enforcement: 'strict', presented: valid({ nomad_node_name: 'web-2' }), allowed: false, log: 'error', reason: /node name "web-2", not "web-1"/ },
  { name: 'strict: a token of another pool is refused', enforcement: 'strict', presented: valid({ nomad_node_pool: 'prod' }), allowed: false, log: 'error', reason: /node pool "prod"/ },
  { name: 'strict: an invalid token is refused', enforcement: 'strict', presented: invalid, allowed: false, log: 'error', reason: /has expired/ },
];

describe('introductionVerdict', () => {
  for (const row of rows) {
    it(row.name, () => {
      const v = introductionVerdict(row.enforcement, row.presented, node);
      assert.equal(v.allowed, row.allowed);
      assert.equal(v.log?.level, row.log);
      if (row.reason) assert.match(v.reason ?? '', row.reason);
      if (v.log) {
        // Nomad's fields, so operators find the node the line is about.
        assert.equal(v.log.fields['enforcement_level'], row.enforcement);
        assert.equal(v.log.fields['node_id'], 'node-1');
        assert.equal(v.log.fields['node_name'], 'web-1');
        assert.equal(v.log.fields['node_pool'], 'default');
      }
    });
  }
});
