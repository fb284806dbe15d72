/**
 * The identity hook (Nomad's identity_hook): before each start it asks the servers to sign the
 * task's workload identities that the task exposes (`env` or `file`), puts each in
 * `NOMAD_TOKEN[_<name>]` and/or writes it to `secrets/nomad_token` (`secrets/nomad_<name>.jwt`,
 * or `filepath`), and keeps identities with a TTL fresh: each is signed again at half its
 * remaining lifetime, its file rewritten and the task told by its `change_mode` (an env value
 * only reaches the task through a restart). Runs after the env hook, before templates.
 */
import { writeFileInsideSync } from '../../../fs/confined-write.js';
import { TaskEventType } from '../../../structs/alloc.js';
import type { SignedIdentity } from '../../../structs/signed-identity.js';
import { identityEnvVar, identityFilePath, IdentityChangeMode, taskIdentities, type WorkloadIdentity } from '../../../structs/workload-identity.js';
import { systemClock, type Clock } from '../../../time/clock.js';
import { ClientError, ClientErrorCode, errorMessage } from '../../client-error.js';
import { newTaskEvent } from '../task-event.js';
import type { PrestartHook, StopHook, TaskHookRequest, TaskPrep } from '../interfaces.js';

/** The soonest a renewal is tried again after a failure. */
const RETRY_MS = 5_000;
/** The shortest wait before a renewal (an identity of a very short TTL is not re-signed in a loop). */
const MIN_RENEW_MS = 1_000;

/** Signs and hands out the task's identities; see the file comment. */
export class IdentityHook implements PrestartHook, StopHook {
  readonly name = 'identity';
  private renewing: AbortController | null = null;

  constructor(private readonly clock: Clock = systemClock) {}

  async prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>> {
    const exposed = taskIdentities(req.task).filter((i) => i.Env || i.File);
    if (exposed.length === 0) return {};
    if (!prep.dirs) throw new ClientError(ClientErrorCode.HookFailed, 'identity hook needs the task directories');
    if (!req.identities) throw new ClientError(ClientErrorCode.HookFailed, 'identity hook: no server to sign the task\'s workload identities');
    const signed = await req.identities({ AllocID: req.alloc.ID, Task: req.task.Name, Identities: exposed.map((i) => i.Name) }, req.signal);
    const env: Record<string, string> = { ...prep.env };
    for (const identity of exposed) {
      const s = signed.find((x) => x.IdentityName === identity.Name);
      if (!s) throw new ClientError(ClientErrorCode.HookFailed, `identity hook: the servers signed no identity "${identity.Name}"`);
      if (identity.Env) env[identityEnvVar(identity.Name)] = s.JWT;
      if (identity.File) writeIdentityFile(prep.dirs.dir, identity, s);
    }
    const expiring = exposed.filter((i) => i.TTL > 0);
    if (expiring.length > 0 && !this.renewing) {
      this.renewing = new AbortController();
      const stop = AbortSignal.any([this.renewing.signal, req.signal]);
      void this.renewLoop(req, prep.dirs.dir, expiring, signed, stop);
    }
    return { env };
  }

  async stop(): Promise<void> {
    this.renewing?.abort();
    this.renewing = null;
  }

  /** Signs `identities` again at half their remaining lifetime until `signal` aborts. */
  private async renewLoop(req: TaskHookRequest, taskDir: string, identities: WorkloadIdentity[], first: SignedIdentity[], signal: AbortSignal): Promise<void> {
    let current = first;
    while (!signal.aborted) {
      const now = this.clock.now() * 1e6;
      const soonest = Math.min(...current.filter((s) => s.Expiration > 0).map((s) => s.Expiration));
      const waitMs = Number.isFinite(soonest) ? Math.max(MIN_RENEW_MS, (soonest - now) / 2 / 1e6) : RETRY_MS;
      try {
        await this.clock.sleep(waitMs, signal);
      } catch {
        return;
      }
      if (signal.aborted || !req.identities) return;
      try {
        current = await req.identities({ AllocID: req.alloc.ID, Task: req.task.Name, Identities: identities.map((i) => i.Name) }, signal);
      } catch (err) {
        if (signal.aborted) return;
        req.lifecycle.emit(newTaskEvent(TaskEventType.HookFailed, this.clock.now(), { DisplayMessage: `renewing workload identities failed: ${errorMessage(err)}` }));
        await this.clock.sleep(RETRY_MS, signal).catch(() => undefined);
        continue;
      }
      await this.applyRenewed(req, taskDir, identities, current);
    }
  }

  /** Writes renewed files and tells the task by each identity's change_mode (once per mode). */
  private async applyRenewed(req: TaskHookRequest, taskDir: string, identities: WorkloadIdentity[], signed: SignedIdentity[]): Promise<void> {
    let restart = false;
    const signals = new Set<string>();
    for (const identity of identities) {
      const s = signed.find((x) => x.IdentityName === identity.Name);
      if (!s) continue;
      if (identity.File) writeIdentityFile(taskDir, identity, s);
      if (identity.ChangeMode === IdentityChangeMode.Restart) restart = true;
      if (identity.ChangeMode === IdentityChangeMode.Signal) signals.add(identity.ChangeSignal);
    }
    try {
      if (restart) await req.lifecycle.restart('workload identity renewed');
      else for (const sig of signals) await req.lifecycle.signal(sig, 'workload identity renewed');
    } catch {
      // The task is not running (between restarts): it gets the new identity when it starts.
    }
  }
}

/** Writes one identity's JWT where the task reads it, never through a link the task planted there. */
function writeIdentityFile(taskDir: string, identity: WorkloadIdentity, s: SignedIdentity): void {
  writeFileInsideSync(taskDir, identityFilePath(identity), s.JWT, 0o644);
}
