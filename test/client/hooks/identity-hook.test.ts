/**
 * The identity hook against a scripted signer and a FakeClock: exposed identities land in
 * NOMAD_TOKEN[_<name>] and secrets/ (never through a link the task planted there), an unexposed
 * task asks for nothing, an identity with a TTL is signed again at half its lifetime, its file
 * rewritten and the task signalled by its change_mode; the default identity the client holds for
 * template reads is reused until half its lifetime has passed.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskHookRequest, TaskIdentitySigner, TaskPrep } from '../../../src/client/taskrunner/interfaces.js';
import { IdentityHook } from '../../../src/client/taskrunner/hooks/identity-hook.js';
import { DefaultIdentity } from '../../../src/client/taskrunner/default-identity.js';
import type { SignIdentitiesRequest } from '../../../src/structs/signed-identity.js';
import type { WorkloadIdentity } from '../../../src/structs/workload-identity.js';
import { canonicalizeIdentity } from '../../../src/structs/workload-identity.js';
import { FakeClock } from '../../../src/time/clock.js';

async function withDirs(fn: (prep: TaskPrep, dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-identity-'));
  await mkdir(join(dir, 'secrets'));
  const prep: TaskPrep = {
    dirs: { dir, localDir: join(dir, 'local'), secretsDir: join(dir, 'secrets'), tmpDir: join(dir, 'tmp'), sharedAllocDir: join(dir, 'alloc'), logDir: join(dir, 'alloc', 'logs') },
    env: { KEEP: '1' },
    driverConfig: {},
    logs: null,
  };
  try {
    await fn(prep, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A signer that numbers its tokens and records the requests. */
function signer(clock: FakeClock, ttlMs: Record<string, number>): { sign: TaskIdentitySigner; calls: SignIdentitiesRequest[] } {
  const calls: SignIdentitiesRequest[] = [];
  let n = 0;
  const sign: TaskIdentitySigner = async (req) => {
    calls.push(req);
    n++;
    return req.Identities.map((name) => ({ AllocID: req.AllocID, TaskName: req.Task, IdentityName: name, JWT: `jwt-${name}-${n}`, Expiration: ttlMs[name] ? (clock.now() + ttlMs[name]!) * 1e6 : 0 }));
  };
  return { sign, calls };
}

function request(identity: Partial<WorkloadIdentity> | null, identities: Partial<WorkloadIdentity>[], sign: TaskIdentitySigner, signals: string[], signal: AbortSignal): TaskHookRequest {
  return {
    alloc: { ID: 'a1' },
    task: { Name: 't', Identity: identity ? canonicalizeIdentity(identity) : null, Identities: identities.map(canonicalizeIdentity) },
    identities: sign,
    signal,
    lifecycle: { signal: async (sig: string) => void signals.push(sig), restart: async () => void signals.push('restart'), emit: () => undefined },
  } as unknown as TaskHookRequest;
}

const flush = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
};

describe('IdentityHook', () => {
  it('puts exposed identities in the env and in secrets/, replacing a link the task planted', async () => {
    await withDirs(async (prep, dir) => {
      const clock = new FakeClock();
      const { sign, calls } = signer(clock, {});
      const outside = join(dir, 'outside');
      await writeFile(outside, 'host file');
      await symlink(outside, join(dir, 'secrets', 'nomad_token'));
      const ac = new AbortController();
      const out = await new IdentityHook(clock).prestart(request({ Env: true, File: true }, [{ Name: 'vault', Audience: ['vault.io'], Env: true, File: true }], sign, [], ac.signal), prep);
      assert.deepEqual(calls.map((c) => c.Identities), [['default', 'vault']]);
      assert.deepEqual(out.env, { KEEP: '1', NOMAD_TOKEN: 'jwt-default-1', NOMAD_TOKEN_vault: 'jwt-vault-1' });
      assert.equal(await readFile(join(dir, 'secrets', 'nomad_token'), 'utf8'), 'jwt-default-1');
      assert.equal(await readFile(join(dir, 'secrets', 'nomad_vault.jwt'), 'utf8'), 'jwt-vault-1');
      assert.equal(await readFile(outside, 'utf8'), 'host file');
      ac.abort();
    });
  });

  it('asks for nothing when the task exposes no identity', async () => {
    await withDirs(async (prep) => {
      const clock = new FakeClock();
      const { sign, calls } = signer(clock, {});
      assert.deepEqual(await new IdentityHook(clock).prestart(request(null, [], sign, [], new AbortController().signal), prep), {});
      assert.equal(calls.length, 0);
    });
  });

  it('renews an identity with a TTL at half its lifetime, rewrites its file and signals the task', async () => {
    await withDirs(async (prep, dir) => {
      const clock = new FakeClock();
      const { sign, calls } = signer(clock, { short: 60_000 });
      const signals: string[] = [];
      const ac = new AbortController();
      const hook = new IdentityHook(clock);
      await hook.prestart(request(null, [{ Name: 'short', Audience: ['x'], File: true, TTL: 60e9, ChangeMode: 'signal', ChangeSignal: 'SIGHUP' }], sign, signals, ac.signal), prep);
      assert.equal(await readFile(join(dir, 'secrets', 'nomad_short.jwt'), 'utf8'), 'jwt-short-1');
      await flush();
      await clock.advanceAsync(29_000);
      await flush();
      assert.equal(calls.length, 1);
      await clock.advanceAsync(1_000);
      await flush();
      assert.equal(calls.length, 2);
      assert.equal(await readFile(join(dir, 'secrets', 'nomad_short.jwt'), 'utf8'), 'jwt-short-2');
      assert.deepEqual(signals, ['SIGHUP']);
      await hook.stop();
      await clock.advanceAsync(120_000);
      await flush();
      assert.equal(calls.length, 2);
    });
  });
});

describe('DefaultIdentity', () => {
  it('is reused until half its lifetime passed, then signed again; one without TTL forever', async () => {
    const clock = new FakeClock();
    const { sign, calls } = signer(clock, { default: 10_000 });
    const id = new DefaultIdentity(sign, 'a1', 't', clock);
    const signal = new AbortController().signal;
    assert.equal(await id.get(signal), 'jwt-default-1');
    clock.advance(4_000);
    assert.equal(await id.get(signal), 'jwt-default-1');
    clock.advance(1_000);
    assert.equal(await id.get(signal), 'jwt-default-2');
    const forever = new DefaultIdentity(signer(clock, {}).sign, 'a1', 't', clock);
    const first = await forever.get(signal);
    clock.advance(365 * 24 * 3600_000);
    assert.equal(await forever.get(signal), first);
    assert.deepEqual(calls.map((c) => c.Identities), [['default'], ['default']]);
  });
});
