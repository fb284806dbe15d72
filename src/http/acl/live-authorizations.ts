/**
 * The live authorizations of an agent: every long-lived connection admitted with a token — an
 * exec session, an event stream, a log or file follow, a monitor, a blocking query — is held
 * here under its token's secret until it ends, and is ended when its token is deleted, expires,
 * or no longer grants what the connection was admitted for. Nomad's event broker closes its
 * subscriptions on ACL changes (handleACLUpdates); Caravan does so for every kind of stream.
 *
 * What changed is learnt from a TokenWatchSource: on a server, the state store's ACL tables,
 * woken by the very apply that deleted a token or changed a policy; on a client-only agent,
 * which resolves tokens by asking its servers, a poll every fraction of a second. Expiry needs
 * no source: one timer is armed for the earliest ExpirationTime held. A change re-resolves each
 * distinct secret once, whatever the number of connections holding it; with nothing held,
 * nothing runs.
 */
import type { Acl } from '../../acl/acl.js';
import { aclTokenExpired, type AclToken } from '../../structs/acl.js';
import type { CaravanError } from '../../structs/caravan-error.js';
import type { Clock, Timer } from '../../time/clock.js';
import { HttpError } from '../http-errors.js';

/** Where a registry learns that tokens, policies or roles changed, and what a token is now. */
export interface TokenWatchSource {
  /**
   * The token of `secret` and its permissions as they are now (bypassing any cache). Throws a
   * 403 CaravanError when the token is gone or expired; any other error means "could not tell"
   * (a server out of reach), and the connections are kept until it can.
   */
  resolve(secret: string): Promise<{ token: AclToken; acl: Acl }>;
  /** The position changes are counted from (a server's ACL table index; 0 where there is none). */
  cursor(): number;
  /** Resolves with a new cursor once the ACL state may have changed after `cursor`, or when `signal` aborts. */
  next(cursor: number, signal: AbortSignal): Promise<number>;
  /** Whether the token of `secret` still exists, where the agent can tell without I/O (a server's state). */
  exists?(secret: string): boolean;
}

/** What is held: a connection, the token it was admitted with, and how to end it. */
export interface GrantRequest {
  /** The secret the connection presented ("" for the anonymous token). */
  secret: string;
  /** Its token as resolved at admission (its ExpirationTime arms the expiry timer). */
  token: AclToken;
  /** Whether re-resolved permissions still allow the connection; absent: the token existing suffices. */
  stillAllows?: (acl: Acl) => boolean;
  /**
   * Ends the connection. Called at most once, with ACL_TOKEN_NOT_FOUND (deleted),
   * ACL_TOKEN_EXPIRED or ACL_PERMISSION_DENIED (its policies no longer allow it).
   */
  revoke: (reason: CaravanError) => void;
}

/** A held connection. */
export interface LiveGrant {
  /**
   * True while the connection may go on. Checks synchronously what the agent can tell without
   * I/O (expiry; on a server, deletion): a connection found invalid is revoked first. Call it
   * before acting on the connection's input (an exec frame).
   */
  check(): boolean;
  /** Stops holding the connection (it ended on its own); idempotent. */
  release(): void;
}

/** A grant that holds nothing: ACLs off, or a connection admitted without a token. */
export const UNHELD: LiveGrant = { check: () => true, release: () => undefined };

interface Held {
  req: GrantRequest;
  revoked: boolean;
}

interface TokenEntry {
  token: AclToken;
  grants: Set<Held>;
}

/** The registry of one agent. */
export class LiveAuthorizations {
  private readonly bySecret = new Map<string, TokenEntry>();
  /** The watch loop while anything is held. */
  private loop: AbortController | undefined;
  private expiryTimer: { at: number; timer: Timer } | undefined;
  private closed = false;

  constructor(
    private readonly source: TokenWatchSource,
    private readonly clock: Clock,
    /** Where failures to re-resolve are reported (they keep the connections; see TokenWatchSource.resolve). */
    private readonly onError: (err: unknown) => void = () => undefined,
  ) {}

  /**
   * Holds a connection until it is released or revoked. Throws the reason (a 403) when the token
   * is already known to be gone or expired — deleted between the gate's check and this hold — so
   * the caller refuses the connection as the gate would have.
   */
  hold(req: GrantRequest): LiveGrant {
    const gone = this.invalidNow(req.secret, req.token);
    if (gone) throw gone;
    const held: Held = { req, revoked: false };
    if (this.closed) return UNHELD;
    let entry = this.bySecret.get(req.secret);
    if (!entry) {
      entry = { token: req.token, grants: new Set() };
      this.bySecret.set(req.secret, entry);
    }
    entry.grants.add(held);
    this.armExpiry();
    this.startLoop();
    return {
      check: () => {
        if (held.revoked) return false;
        const reason = this.invalidNow(req.secret, req.token);
        if (reason) this.revoke(held, reason);
        return !held.revoked;
      },
      release: () => this.drop(held),
    };
  }

  /** How many connections are held (for tests and metrics). */
  size(): number {
    let n = 0;
    for (const e of this.bySecret.values()) n += e.grants.size;
    return n;
  }

  /** Stops watching; held connections are left to the agent's own shutdown. */
  close(): void {
    this.closed = true;
    this.loop?.abort();
    this.loop = undefined;
    this.expiryTimer?.timer.cancel();
    this.expiryTimer = undefined;
    this.bySecret.clear();
  }

  /** Why the token cannot be used now, as far as the agent can tell without I/O. */
  private invalidNow(secret: string, token: AclToken): CaravanError | undefined {
    if (aclTokenExpired(token, this.clock.now())) return new HttpError('ACL_TOKEN_EXPIRED', {});
    if (this.source.exists && !this.source.exists(secret)) return new HttpError('ACL_TOKEN_NOT_FOUND', {});
    return undefined;
  }

  private revoke(held: Held, reason: CaravanError): void {
    if (held.revoked) return;
    held.revoked = true;
    this.drop(held);
    try {
      held.req.revoke(reason);
    } catch (err) {
      this.onError(err);
    }
  }

  private drop(held: Held): void {
    const entry = this.bySecret.get(held.req.secret);
    if (!entry || !entry.grants.delete(held)) return;
    if (entry.grants.size > 0) return;
    this.bySecret.delete(held.req.secret);
    if (this.bySecret.size === 0) {
      this.loop?.abort();
      this.loop = undefined;
      this.expiryTimer?.timer.cancel();
      this.expiryTimer = undefined;
    }
  }

  private startLoop(): void {
    if (this.loop || this.closed) return;
    const ac = new AbortController();
    this.loop = ac;
    void this.watch(ac.signal).finally(() => {
      if (this.loop === ac) this.loop = undefined;
      // Something was held again while this loop was finishing.
      if (this.bySecret.size > 0 && !this.closed) this.startLoop();
    });
  }

  /** Waits for ACL changes and re-checks every held token after each, until nothing is held. */
  private async watch(signal: AbortSignal): Promise<void> {
    let cursor = this.source.cursor();
    while (!signal.aborted && this.bySecret.size > 0) {
      try {
        cursor = await this.source.next(cursor, signal);
      } catch (err) {
        if (signal.aborted) return;
        this.onError(err);
        // Do not spin on a source that fails at once.
        await this.clock.sleep(1000, signal).catch(() => undefined);
        continue;
      }
      if (signal.aborted) return;
      await this.recheckAll();
    }
  }

  /** Re-resolves each held secret once and ends the connections it no longer allows. */
  private async recheckAll(): Promise<void> {
    await Promise.all(
      [...this.bySecret.keys()].map(async (secret) => {
        let resolved: { token: AclToken; acl: Acl };
        try {
          resolved = await this.source.resolve(secret);
        } catch (err) {
          const e = err as Partial<CaravanError>;
          if (e.status === 403) this.revokeSecret(secret, err as CaravanError);
          else this.onError(err);
          return;
        }
        const entry = this.bySecret.get(secret);
        if (!entry) return;
        entry.token = resolved.token;
        if (aclTokenExpired(resolved.token, this.clock.now())) return this.revokeSecret(secret, new HttpError('ACL_TOKEN_EXPIRED', {}));
        for (const held of [...entry.grants]) {
          if (held.req.stillAllows && !held.req.stillAllows(resolved.acl)) this.revoke(held, new HttpError('ACL_PERMISSION_DENIED', {}));
        }
      }),
    );
    this.armExpiry();
  }

  private revokeSecret(secret: string, reason: CaravanError): void {
    const entry = this.bySecret.get(secret);
    if (!entry) return;
    // A 403 names why: deleted (not found) or expired; anything else is a refusal.
    const code = reason.code === 'ACL_TOKEN_EXPIRED' || reason.code === 'ACL_TOKEN_NOT_FOUND' ? reason.code : 'ACL_TOKEN_NOT_FOUND';
    for (const held of [...entry.grants]) this.revoke(held, new HttpError(code, {}));
  }

  /** Arms one timer for the earliest expiry among the held tokens. */
  private armExpiry(): void {
    let earliest = Infinity;
    for (const e of this.bySecret.values()) {
      if (e.token.ExpirationTime === null) continue;
      const at = Date.parse(e.token.ExpirationTime);
      if (Number.isFinite(at) && at < earliest) earliest = at;
    }
    if (this.expiryTimer && this.expiryTimer.at === earliest) return;
    this.expiryTimer?.timer.cancel();
    this.expiryTimer = undefined;
    if (earliest === Infinity || this.closed) return;
    const timer = this.clock.setTimer(Math.max(0, earliest - this.clock.now()), () => {
      this.expiryTimer = undefined;
      this.expireDue();
    });
    this.expiryTimer = { at: earliest, timer };
  }

  private expireDue(): void {
    const now = this.clock.now();
    for (const [secret, e] of [...this.bySecret]) {
      if (aclTokenExpired(e.token, now)) this.revokeSecret(secret, new HttpError('ACL_TOKEN_EXPIRED', {}));
    }
    this.armExpiry();
  }
}
