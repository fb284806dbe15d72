/**
 * Attacks on the task action route, `GET /v1/job/:job/action` (what `nomad action` opens), on an
 * ACL-enabled server + client-only agent pair. An action runs a command the job declares; the
 * caller only names it. Refused, with nothing run: a caller's own `command` / `args` query
 * parameters in place of the action's; another namespace's action without a token for it (by its
 * job, and through the caller's own job's path); a token lacking alloc-node-exec for a raw_exec
 * task, or read-job; an allocation of another job than the path's; action names with path
 * characters, traversal and NUL. Every command that would show a breach writes a marker file in a
 * directory the test made for the purpose; none may exist at the end.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub } from '../../src/structs/index.js';
import { startAclCluster, type AclCluster } from './helpers/acl-cluster.js';
import { actionOnce, type ActionOnce } from '../integration/helpers/action-socket.js';

let c: AclCluster;
let marks: string;
let victim: AllocListStub;
let own: AllocListStub;
let other: AllocListStub;
let attacker: AclToken;
let noNodeExec: AclToken;
let noReadJob: AclToken;

/** A raw_exec job that sleeps, with an action "ok" echoing a line and an action "mark" touching `marker`. */
const job = (id: string, namespace: string, marker: string) => `
job "${id}" {
  datacenters = ["dc1"]
  namespace   = "${namespace}"
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      action "ok" {
        command = "/bin/echo"
        args    = ["all", "fine"]
      }
      action "mark" {
        command = "/usr/bin/touch"
        args    = [${JSON.stringify(marker)}]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;

/** Asserts the session was refused before anything ran: no exit frame, a reason matching `why`. */
function refused(what: string, r: ActionOnce, why: RegExp): void {
  assert.equal(r.exitCode, undefined, `${what}: ran (exit ${r.exitCode}, stdout ${JSON.stringify(r.stdout)})`);
  assert.match(r.reason, why, `${what}: closed ${r.code} ${JSON.stringify(r.reason)}`);
}

const marker = (name: string) => join(marks, name);

before(async () => {
  c = await startAclCluster();
  marks = join(c.tmp, 'marks');
  mkdirSync(marks, { recursive: true });
  await c.namespace('team-a');
  await c.namespace('team-b');
  attacker = await c.token('attacker', 'namespace "team-a" {\n  policy       = "write"\n  capabilities = ["alloc-node-exec"]\n}');
  noNodeExec = await c.token('no-node-exec', 'namespace "team-a" {\n  policy = "write"\n}');
  noReadJob = await c.token('no-read-job', 'namespace "team-a" {\n  capabilities = ["alloc-exec", "alloc-node-exec"]\n}');
  victim = await c.runJob('payments', 'team-b', job('payments', 'team-b', marker('victim-action-ran')));
  own = await c.runJob('mine', 'team-a', job('mine', 'team-a', marker('own-mark')));
  other = await c.runJob('other', 'team-a', job('other', 'team-a', marker('other-mark')));
});

after(async () => {
  await c?.close();
});

describe('the task action route runs only the job\'s declared action, for a token allowed to', () => {
  const S = () => c.server.address;
  const as = (t: AclToken) => ({ 'X-Nomad-Token': t.SecretID });

  it('the attacker\'s own action runs (the baseline the refusals are measured against)', async () => {
    const r = await actionOnce(S(), 'mine', { action: 'ok', allocID: own.ID, task: 't' }, as(attacker));
    assert.equal(r.exitCode, 0, r.reason);
    assert.equal(r.stdout, 'all fine\n');
  });

  it('a caller\'s `command` and `args` parameters are never run in place of the action\'s', async () => {
    const injected = JSON.stringify(['/usr/bin/touch', marker('injected')]);
    const extras: Record<string, string>[] = [{ command: injected }, { args: injected }, { command: injected, args: injected }, { Command: injected }];
    for (const extra of extras) {
      const r = await actionOnce(S(), 'mine', { action: 'ok', allocID: own.ID, task: 't', ...extra }, as(attacker));
      assert.equal(r.exitCode, 0, `${JSON.stringify(extra)}: ${r.reason}`);
      assert.equal(r.stdout, 'all fine\n', `${JSON.stringify(extra)}: the caller's command ran`);
    }
    // Without an action, a command alone is no exec through this route.
    refused('command without action', await actionOnce(S(), 'mine', { allocID: own.ID, task: 't', command: injected }, as(attacker)), /missing "action" parameter/);
    assert.ok(!existsSync(marker('injected')), 'the injected command ran');
  });

  it('another namespace\'s action is refused without a token for it, by its job and through the caller\'s own job', async () => {
    refused('no token', await actionOnce(S(), 'payments', { action: 'mark', allocID: victim.ID, task: 't' }), /Permission denied/i);
    refused('team-a token', await actionOnce(S(), 'payments', { action: 'mark', allocID: victim.ID, task: 't' }, as(attacker)), /Permission denied/i);
    refused('team-a token, ?namespace=team-a', await actionOnce(S(), 'payments', { action: 'mark', allocID: victim.ID, task: 't', namespace: 'team-a' }, as(attacker)), /Permission denied/i);
    refused('own job path, victim alloc', await actionOnce(S(), 'mine', { action: 'mark', allocID: victim.ID, task: 't' }, as(attacker)), /Permission denied/i);
    refused('8-character prefix', await actionOnce(S(), 'payments', { action: 'mark', allocID: victim.ID.slice(0, 8), task: 't' }, as(attacker)), /Permission denied|Unknown allocation|not found/i);
    refused('through the client agent', await actionOnce(c.client.address, 'payments', { action: 'mark', allocID: victim.ID, task: 't' }, as(attacker)), /Permission denied/i);
    assert.ok(!existsSync(marker('victim-action-ran')), 'team-b\'s action ran');
  });

  it('a token without alloc-node-exec (raw_exec has no isolation) or without read-job is refused, naming what it lacks', async () => {
    refused('no alloc-node-exec', await actionOnce(S(), 'mine', { action: 'mark', allocID: own.ID, task: 't' }, as(noNodeExec)), /alloc-node-exec/);
    refused('no read-job', await actionOnce(S(), 'mine', { action: 'mark', allocID: own.ID, task: 't' }, as(noReadJob)), /Permission denied/i);
    assert.ok(!existsSync(marker('own-mark')), 'the action ran for a token lacking a capability');
  });

  it('an allocation of another job than the path names is refused', async () => {
    refused('other job\'s alloc', await actionOnce(S(), 'mine', { action: 'mark', allocID: other.ID, task: 't' }, as(attacker)), /is not an allocation of job "mine"/);
    refused('victim job path, own alloc', await actionOnce(S(), 'payments', { action: 'mark', allocID: own.ID, task: 't' }, as(attacker)), /is not an allocation of job "payments"/);
    assert.ok(!existsSync(marker('other-mark')), 'another job\'s action ran');
  });

  it('action names with path characters, traversal or NUL name no action', async () => {
    for (const name of ['../mark', '/usr/bin/touch', 'mark/', './mark', 'ok/../mark', '..%2fmark', 'mark\0', ' mark', '*', 'MARK', '/v1/job/mine/action']) {
      refused(`action ${JSON.stringify(name)}`, await actionOnce(S(), 'mine', { action: name, allocID: own.ID, task: 't' }, as(attacker)), /not found in task "t"/);
    }
    refused('task with path characters', await actionOnce(S(), 'mine', { action: 'mark', allocID: own.ID, task: '../t' }, as(attacker)), /not found/);
    assert.ok(!existsSync(marker('own-mark')), 'a path-like action name ran the action');
  });
});
