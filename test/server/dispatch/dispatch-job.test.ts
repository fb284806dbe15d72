import { describe, it, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Job } from '../../../src/structs/index.js';
import { ServerError } from '../../../src/server/server-error.js';
import { Table } from '../../../src/server/state/state-reader.js';
import {
  DISPATCH_PAYLOAD_SIZE_LIMIT,
  dispatchJob,
  dispatchedJob,
  parseDispatchBody,
  validateDispatch,
  type DispatchRequest,
} from '../../../src/server/dispatch/dispatch-job.js';
import { Server } from '../../../src/server/server.js';
import { FakeClock } from '../../../src/time/clock.js';
import { mockJob, mockNode } from '../../mock/factories.js';
import { fakeSchedulerFactory } from '../fake-scheduler.js';

function parameterized(payload: 'optional' | 'required' | 'forbidden' = 'optional'): Job {
  const base = mockJob({ ID: 'greet', Name: 'greet', Type: 'batch', Meta: { greeting: 'hello', keep: 'me' } });
  return {
    ...base,
    TaskGroups: [{ ...base.TaskGroups[0]!, Count: 1 }],
    ParameterizedJob: { Payload: payload, MetaRequired: ['name'], MetaOptional: ['greeting'] },
  };
}

function req(over: Partial<DispatchRequest> = {}): DispatchRequest {
  return { payload: '', meta: { name: 'world' }, idempotencyToken: '', idPrefixTemplate: '', ...over };
}

function rejects400(fn: () => unknown, re: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof ServerError && e.code === 'DISPATCH_INVALID' && e.status === 400 && re.test(e.message));
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('dispatch request decoding', () => {
  it('reads Payload, Meta, IdempotencyToken and IdPrefixTemplate', () => {
    const r = parseDispatchBody({ Payload: b64('hi'), Meta: { name: 'x' }, IdempotencyToken: 't', IdPrefixTemplate: 'batch' });
    assert.deepEqual(r, { payload: b64('hi'), meta: { name: 'x' }, idempotencyToken: 't', idPrefixTemplate: 'batch' });
    assert.deepEqual(parseDispatchBody({}), { payload: '', meta: {}, idempotencyToken: '', idPrefixTemplate: '' });
  });

  it('names the bad field', () => {
    rejects400(() => parseDispatchBody({ Payload: 5 }), /^Payload: must be a base64 string/);
    rejects400(() => parseDispatchBody({ Payload: 'not base64!' }), /^Payload: is not valid base64/);
    rejects400(() => parseDispatchBody({ Meta: ['a'] }), /^Meta: must be an object/);
    rejects400(() => parseDispatchBody({ Meta: { name: 1 } }), /^Meta\["name"\]: must be a string/);
    rejects400(() => parseDispatchBody({ IdempotencyToken: 1 }), /^IdempotencyToken/);
    rejects400(() => parseDispatchBody({ IdPrefixTemplate: 'a/b' }), /^IdPrefixTemplate/);
  });
});

describe('dispatch validation', () => {
  it('accepts required and optional meta', () => {
    validateDispatch(parameterized(), req({ meta: { name: 'a', greeting: 'hey' } }));
  });

  it('rejects a missing required key naming it', () => {
    rejects400(() => validateDispatch(parameterized(), req({ meta: {} })), /required meta keys: name/);
  });

  it('rejects unknown meta keys naming them', () => {
    rejects400(() => validateDispatch(parameterized(), req({ meta: { name: 'a', zzz: '1', color: 'x' } })), /unpermitted metadata keys: color, zzz/);
  });

  it('enforces payload required / forbidden and the 16 KiB limit', () => {
    rejects400(() => validateDispatch(parameterized('required'), req()), /^Payload: not provided but required/);
    rejects400(() => validateDispatch(parameterized('forbidden'), req({ payload: b64('x') })), /^Payload: not permitted/);
    validateDispatch(parameterized('required'), req({ payload: b64('x') }));
    validateDispatch(parameterized(), req({ payload: b64('x'.repeat(DISPATCH_PAYLOAD_SIZE_LIMIT)) }));
    rejects400(() => validateDispatch(parameterized(), req({ payload: b64('x'.repeat(DISPATCH_PAYLOAD_SIZE_LIMIT + 1)) })), /exceeds maximum size; 16385 > 16384/);
  });

  it('rejects a job that is not parameterized, or stopped', () => {
    rejects400(() => validateDispatch(mockJob({ ID: 'plain' }), req()), /"plain" is not a parameterized job/);
    rejects400(() => validateDispatch({ ...parameterized(), Stop: true }, req()), /is stopped/);
  });
});

describe('dispatched child job', () => {
  it('is named after the parent and time, carries the payload and merged meta', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const child = dispatchedJob(parameterized(), req({ payload: b64('data'), meta: { name: 'world', greeting: 'hey' }, idempotencyToken: 'tok' }), now);
    assert.match(child.ID, /^greet\/dispatch-1767225600-[0-9a-f]{8}$/);
    assert.equal(child.Name, child.ID);
    assert.equal(child.ParentID, 'greet');
    assert.equal(child.Dispatched, true);
    assert.equal(child.ParameterizedJob, null);
    assert.equal(child.Payload, b64('data'));
    assert.deepEqual(child.Meta, { greeting: 'hey', keep: 'me', name: 'world' });
    assert.equal(child.DispatchIdempotencyToken, 'tok');
    const templated = dispatchedJob(parameterized(), req({ idPrefixTemplate: 'nightly' }), now);
    assert.match(templated.ID, /^greet\/dispatch-nightly-1767225600-[0-9a-f]{8}$/);
  });
});

describe('dispatch through the server', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('never schedules the parent, schedules the child, returns the same child for a repeated token, and counts children', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'caravan-dispatch-'));
    dirs.push(dir);
    const clock = new FakeClock(Date.parse('2026-01-01T00:00:00Z'));
    const s = await Server.open({ dataDir: dir, clock, numWorkers: 1, schedulerFactory: () => fakeSchedulerFactory, gcIntervalMs: 0 });
    servers.push(s);
    await s.registerNode(mockNode());
    const reg = await s.registerJob(parameterized());
    assert.equal(reg.evalId, '');
    assert.equal(s.state.jobById('default', 'greet')?.Status, 'running');

    const first = await dispatchJob(s, 'default', 'greet', req({ idempotencyToken: 'once' }), clock.now());
    assert.ok(first.EvalID);
    assert.equal(first.EvalCreateIndex, first.Index);
    assert.ok(first.JobCreateIndex > 0);
    const again = await dispatchJob(s, 'default', 'greet', req({ idempotencyToken: 'once' }), clock.now());
    assert.equal(again.DispatchedJobID, first.DispatchedJobID);
    assert.equal(again.EvalID, '');
    const other = await dispatchJob(s, 'default', 'greet', req(), clock.now());
    assert.notEqual(other.DispatchedJobID, first.DispatchedJobID);

    for (let i = 0; i < 100 && (s.state.jobSummary('default', 'greet')?.Children?.Running ?? 0) < 2; i++) {
      await s.waitForChange([Table.JobSummaries], s.state.latestIndex(), 20);
    }
    assert.deepEqual(s.state.jobSummary('default', 'greet')?.Children, { Pending: 0, Running: 2, Dead: 0 });
    assert.equal(s.state.allocsByJob('default', 'greet').length, 0);
    assert.equal(s.state.allocsByJob('default', first.DispatchedJobID).length, 1);

    await s.deregisterJob('default', other.DispatchedJobID, { purge: true });
    assert.deepEqual(s.state.jobSummary('default', 'greet')?.Children, { Pending: 0, Running: 1, Dead: 0 });
    await assert.rejects(dispatchJob(s, 'default', 'nope', req(), clock.now()), (e: unknown) => e instanceof ServerError && e.code === 'JOB_NOT_FOUND' && e.status === 404);
  });
});
