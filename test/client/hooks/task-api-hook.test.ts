/**
 * The task-api hook: the socket made before the first start is kept across restarts, made again
 * in poststart for a reattached task, closed at shutdown and removed at stop; it belongs to the
 * task's user (exec's default nobody, a numeric docker user) with secrets/ searchable by it; a
 * failure to listen is logged and does not fail the task (Nomad's soft-fail).
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { AllocDir } from '../../../src/client/allocdir/alloc-dir.js';
import { TaskApiHook } from '../../../src/client/taskrunner/hooks/task-api-hook.js';
import type { TaskHookRequest } from '../../../src/client/taskrunner/interfaces.js';

const root = mkdtempSync(join(tmpdir(), 'cv-tapi-hook-'));
after(() => rmSync(root, { recursive: true, force: true }));
const logger = pino({ level: 'silent' });
const accepted: Socket[] = [];
const connections = { accept: (s: Socket) => accepted.push(s) };

async function request(allocId: string, driver: string, user?: string): Promise<TaskHookRequest> {
  const allocDir = new AllocDir(root, allocId);
  await allocDir.buildTaskDir('t');
  return { allocDir, task: { Name: 't', User: user }, driver: { name: driver } } as unknown as TaskHookRequest;
}

const sockPath = (allocId: string): string => join(root, 'alloc', allocId, 't', 'secrets', 'api.sock');
const nobodyUid = Number(readFileSync('/etc/passwd', 'utf8').split('\n').find((l) => l.startsWith('nobody:'))!.split(':')[2]);
const asRoot = process.getuid?.() === 0;

test('kept across restarts of the task, closed at shutdown, made again in poststart, removed at stop', async () => {
  const req = await request('a1', 'raw_exec');
  const hook = new TaskApiHook(connections, logger);
  assert.deepEqual(await hook.prestart(req), {});
  const first = lstatSync(sockPath('a1'));
  assert.ok(first.isSocket());
  assert.equal(first.mode & 0o777, 0o600);
  await hook.prestart(req);
  assert.equal(lstatSync(sockPath('a1')).ino, first.ino, 'a restart keeps the socket');

  // Agent shutdown, then a new agent reattaches: no prestart, poststart makes it again.
  await hook.shutdown();
  const next = new TaskApiHook(connections, logger);
  await next.poststart(req);
  assert.ok(lstatSync(sockPath('a1')).isSocket());
  await next.stop();
  assert.equal(existsSync(sockPath('a1')), false);
});

test('the socket is the task user\'s: exec\'s nobody, a numeric user; secrets/ searchable by it', { skip: !asRoot && 'needs root to chown' }, async () => {
  for (const [id, driver, user, uid] of [['e1', 'exec', undefined, nobodyUid], ['d1', 'docker', '4242:4243', 4242]] as const) {
    const hook = new TaskApiHook(connections, logger);
    await hook.prestart(await request(id, driver, user));
    const st = lstatSync(sockPath(id));
    assert.equal(st.uid, uid, id);
    assert.equal(st.mode & 0o777, 0o600, id);
    assert.equal(statSync(join(root, 'alloc', id, 't', 'secrets')).mode & 0o777, 0o711, id);
    await hook.stop();
  }
  // raw_exec without a user: the agent's own, secrets/ stays private.
  const hook = new TaskApiHook(connections, logger);
  await hook.prestart(await request('r1', 'raw_exec'));
  assert.equal(lstatSync(sockPath('r1')).uid, process.getuid!());
  assert.equal(statSync(join(root, 'alloc', 'r1', 't', 'secrets')).mode & 0o777, 0o700);
  await hook.stop();
});

test('a socket that cannot be made does not fail the task', async () => {
  const req = await request('f1', 'raw_exec');
  mkdirSync(sockPath('f1'));
  const hook = new TaskApiHook(connections, logger);
  assert.deepEqual(await hook.prestart(req), {});
  assert.ok(lstatSync(sockPath('f1')).isDirectory());
  await hook.stop();
});
