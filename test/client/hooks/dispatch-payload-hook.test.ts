import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskHookRequest, TaskPrep } from '../../../src/client/taskrunner/interfaces.js';
import { DispatchPayloadHook, DispatchPayloadPathError } from '../../../src/client/taskrunner/hooks/dispatch-payload-hook.js';

async function withDirs(fn: (prep: TaskPrep, dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-payload-'));
  const prep: TaskPrep = {
    dirs: { dir, localDir: join(dir, 'local'), secretsDir: join(dir, 'secrets'), tmpDir: join(dir, 'tmp'), sharedAllocDir: join(dir, 'alloc'), logDir: join(dir, 'alloc', 'logs') },
    env: {},
    driverConfig: {},
    logs: null,
  };
  try {
    await fn(prep, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function request(file: string | null, payload: string | null): TaskHookRequest {
  return {
    alloc: { Job: { Payload: payload } },
    task: { Name: 't', DispatchPayload: file === null ? null : { File: file } },
  } as unknown as TaskHookRequest;
}

describe('DispatchPayloadHook', () => {
  it('writes the decoded payload under local/', async () => {
    await withDirs(async (prep, dir) => {
      await new DispatchPayloadHook().prestart(request('in/data.txt', Buffer.from('hello').toString('base64')), prep);
      assert.equal(await readFile(join(dir, 'local', 'in', 'data.txt'), 'utf8'), 'hello');
    });
  });

  it('writes an empty file when there is no payload, and nothing without a dispatch_payload block', async () => {
    await withDirs(async (prep, dir) => {
      await new DispatchPayloadHook().prestart(request('empty', null), prep);
      assert.equal(await readFile(join(dir, 'local', 'empty'), 'utf8'), '');
      assert.deepEqual(await new DispatchPayloadHook().prestart(request(null, 'aGk='), prep), {});
    });
  });

  it('refuses a path that escapes local/', async () => {
    await withDirs(async (prep) => {
      await assert.rejects(new DispatchPayloadHook().prestart(request('../secrets/x', 'aGk='), prep), DispatchPayloadPathError);
    });
  });
});
