/**
 * A task's default workload identity as the client holds it for its own calls on the task's
 * behalf (template variable reads): signed on first use, reused while it has more than half
 * its lifetime left (one without a TTL never expires), signed again after that. Also serves a
 * task reattached after an agent restart, whose prestart hooks did not run.
 */
import { DEFAULT_IDENTITY_NAME } from '../../structs/workload-identity.js';
import type { Clock } from '../../time/clock.js';
import type { TaskIdentitySigner } from './interfaces.js';

/** The default identity of one task; see the file comment. */
export class DefaultIdentity {
  private held: { jwt: string; renewAtMs: number } | null = null;
  private signing: Promise<string> | null = null;

  constructor(
    private readonly sign: TaskIdentitySigner,
    private readonly allocId: string,
    private readonly task: string,
    private readonly clock: Clock,
  ) {}

  /** The JWT, signed again when past half its lifetime; concurrent callers share one signing. */
  async get(signal: AbortSignal): Promise<string> {
    if (this.held && this.clock.now() < this.held.renewAtMs) return this.held.jwt;
    this.signing ??= this.fetch(signal).finally(() => (this.signing = null));
    return this.signing;
  }

  private async fetch(signal: AbortSignal): Promise<string> {
    const nowMs = this.clock.now();
    const [signed] = await this.sign({ AllocID: this.allocId, Task: this.task, Identities: [DEFAULT_IDENTITY_NAME] }, signal);
    if (!signed) throw new Error('the servers signed no default identity');
    const expMs = signed.Expiration / 1e6;
    this.held = { jwt: signed.JWT, renewAtMs: signed.Expiration > 0 ? nowMs + (expMs - nowMs) / 2 : Number.POSITIVE_INFINITY };
    return signed.JWT;
  }
}
