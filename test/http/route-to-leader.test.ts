/**
 * Where a request to a server goes (routeToLeader): a read without ?stale only on a leader
 * ready for consistent reads (else Nomad's "Not ready to serve consistent reads"), proxied to the
 * leader from a follower, refused ("No cluster leader") when no leader is known or when it was
 * forwarded to a server that no longer leads; ?stale reads and per-server routes answered here.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FORWARDED_TO_LEADER_HEADER, routeToLeader } from '../../src/http/forward-to-leader/leader-forward.js';
import type { ServerApi } from '../../src/server/server-api.js';

function server(s: { leader: boolean; ready?: boolean; address?: string }): ServerApi {
  return { isLeader: () => s.leader, readyForConsistentReads: () => s.ready ?? s.leader, leaderAddress: () => s.address ?? '' } as unknown as ServerApi;
}

describe('routeToLeader', () => {
  it('a leader answers reads only once ready for consistent reads; writes and ?stale reads at once', () => {
    const catchingUp = server({ leader: true, ready: false, address: 'me:1' });
    assert.deepEqual(routeToLeader('GET', '/v1/jobs', {}, catchingUp), { kind: 'not-ready' });
    assert.deepEqual(routeToLeader('GET', '/v1/jobs?stale', {}, catchingUp), { kind: 'local' });
    assert.deepEqual(routeToLeader('PUT', '/v1/jobs', {}, catchingUp), { kind: 'local' });
    assert.deepEqual(routeToLeader('GET', '/v1/jobs', {}, server({ leader: true, address: 'me:1' })), { kind: 'local' });
  });

  it('a follower proxies to the known leader, refuses without one, serves ?stale itself', () => {
    const following = server({ leader: false, address: 'l:1' });
    assert.deepEqual(routeToLeader('GET', '/v1/jobs', {}, following), { kind: 'leader', address: 'l:1' });
    assert.deepEqual(routeToLeader('PUT', '/v1/jobs', {}, following), { kind: 'leader', address: 'l:1' });
    const leaderless = server({ leader: false });
    assert.deepEqual(routeToLeader('GET', '/v1/jobs', {}, leaderless), { kind: 'no-leader' });
    assert.deepEqual(routeToLeader('GET', '/v1/job/x?stale=true', {}, leaderless), { kind: 'local' });
    assert.deepEqual(routeToLeader('PUT', '/v1/jobs', {}, leaderless), { kind: 'no-leader' });
    assert.deepEqual(routeToLeader('GET', '/v1/status/leader', {}, leaderless), { kind: 'local' });
  });

  it('a request forwarded to a server that no longer leads: a read is refused, a write fails on its own', () => {
    const deposed = server({ leader: false, address: 'other:1' });
    const headers = { [FORWARDED_TO_LEADER_HEADER]: '1' };
    assert.deepEqual(routeToLeader('GET', '/v1/jobs', headers, deposed), { kind: 'no-leader' });
    assert.deepEqual(routeToLeader('PUT', '/v1/jobs', headers, deposed), { kind: 'local' });
  });
});
