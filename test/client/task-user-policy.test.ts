/** The client's user policy (user.denylist over user.checked_drivers) and the validate hook applying it. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePasswd, refusedTaskUser, taskUserPolicy } from '../../src/client/taskrunner/task-user-policy.js';

const PASSWD = parsePasswd(
  ['root:x:0:0:root:/root:/bin/bash', 'toor:x:0:0:second root:/root:/bin/sh', 'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin', 'app:x:1000:1000::/home/app:/bin/sh', 'broken line', ''].join('\n'),
);
const passwd = () => PASSWD;

test('user policy: Nomad defaults refuse root and Administrator for exec, qemu and java only', () => {
  const p = taskUserPolicy();
  for (const driver of ['exec', 'qemu', 'java']) {
    assert.equal(refusedTaskUser(p, driver, 'root', passwd), 'running as user "root" is disallowed');
    assert.equal(refusedTaskUser(p, driver, 'Administrator', passwd), 'running as user "Administrator" is disallowed');
  }
  assert.equal(refusedTaskUser(p, 'docker', 'root', passwd), null);
  assert.equal(refusedTaskUser(p, 'raw_exec', 'root', passwd), null);
  assert.equal(refusedTaskUser(p, 'exec', 'nobody', passwd), null);
  assert.equal(refusedTaskUser(p, 'exec', '', passwd), null, 'no user: the driver default (nobody)');
});

test('user policy: a numeric uid or another name of a denied uid is refused too', () => {
  const p = taskUserPolicy();
  assert.match(refusedTaskUser(p, 'exec', '0', passwd) ?? '', /running as user "0" is disallowed \(it is uid 0, as "root"\)/);
  assert.match(refusedTaskUser(p, 'exec', 'toor', passwd) ?? '', /"toor" is disallowed/);
  assert.equal(refusedTaskUser(p, 'exec', '1000', passwd), null);
  assert.equal(refusedTaskUser(p, 'exec', 'app', passwd), null);
});

test('user policy: the options change the lists, trimmed; an empty denylist allows everyone; blacklist is the old name', () => {
  assert.equal(refusedTaskUser(taskUserPolicy({ 'user.denylist': '' }), 'exec', 'root', passwd), null);
  assert.equal(refusedTaskUser(taskUserPolicy({ 'user.denylist': '' }), 'exec', '0', passwd), null);
  const custom = taskUserPolicy({ 'user.denylist': ' app , root', 'user.checked_drivers': 'exec, docker' });
  assert.notEqual(refusedTaskUser(custom, 'docker', 'app', passwd), null);
  assert.notEqual(refusedTaskUser(custom, 'exec', '1000', passwd), null);
  assert.equal(refusedTaskUser(custom, 'qemu', 'root', passwd), null, 'qemu is no longer checked');
  assert.notEqual(refusedTaskUser(taskUserPolicy({ 'user.blacklist': 'app' }), 'exec', 'app', passwd), null);
  assert.equal(refusedTaskUser(taskUserPolicy({ 'user.blacklist': 'app' }), 'exec', 'root', passwd), null);
  assert.equal(refusedTaskUser(taskUserPolicy({ 'user.denylist': 'root', 'user.blacklist': 'app' }), 'exec', 'app', passwd), null, 'denylist wins');
});

test('user policy: passwd is read only when the driver is checked', () => {
  let reads = 0;
  const counting = () => {
    reads++;
    return PASSWD;
  };
  refusedTaskUser(taskUserPolicy(), 'docker', '0', counting);
  refusedTaskUser(taskUserPolicy(), 'exec', 'root', counting);
  assert.equal(reads, 0);
  refusedTaskUser(taskUserPolicy(), 'exec', '0', counting);
  assert.equal(reads, 1);
});
