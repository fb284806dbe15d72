/**
 * How a follower answers the API, as Nomad's servers do: writes (and clients' internal calls)
 * go to the leader, reads too unless the request says `?stale`, in which case the follower
 * answers from its own state (which it keeps by applying the same log). A forwarded request is
 * proxied unchanged — method, path, query, headers (the ACL token and the node's SecretID),
 * body — and the leader's answer streams back as it comes, so blocking queries block on the
 * leader. Routes about this agent or cluster membership, client routes and the event stream are
 * answered by every server itself.
 *
 * A request a server already forwarded is never forwarded again: a server that lost leadership
 * meanwhile answers a write itself (it fails with NOT_LEADER, which clients retry) and refuses a
 * read. A follower that knows no leader refuses reads without ?stale and writes with Nomad's
 * `No cluster leader`.
 *
 * A forward the leader never received — it died and the view still names it until its lease
 * lapses, so the connection is refused — is held (leader-hold.ts) and replayed to the next
 * leader, or answered here if this server leads by then, instead of a 503 the caller must retry.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { ServerApi } from '../../server/server-api.js';
import { ServerProxy } from '../forward-to-server/server-proxy.js';
import type { OutboundTls } from '../../tls/tls-config.js';

/** Marks a request a follower forwarded to the leader. */
export const FORWARDED_TO_LEADER_HEADER = 'x-caravan-forwarded-to-leader';

/**
 * Where a request goes: answered here, proxied to the leader, or refused because no leader is
 * known (NO_LEADER) or this leader has not caught up yet (NOT_READY_FOR_CONSISTENT_READS).
 */
export type LeaderRoute = { kind: 'local' } | { kind: 'leader'; address: string } | { kind: 'no-leader' } | { kind: 'not-ready' };

/** True for routes every server answers from what it knows itself. */
export function answeredByEveryServer(path: string): boolean {
  if (!path.startsWith('/v1/')) return true;
  return (
    path.startsWith('/v1/client/') ||
    path.startsWith('/v1/agent/') ||
    path.startsWith('/v1/status/') ||
    path.startsWith('/v1/operator/raft/') ||
    path === '/v1/regions' ||
    path === '/v1/metrics' ||
    path === '/v1/event/stream'
  );
}

/** Whether a read may be answered from this server's state (Nomad's `?stale`). */
function allowsStale(url: string): boolean {
  const q = url.indexOf('?');
  if (q < 0) return false;
  const stale = new URLSearchParams(url.slice(q + 1)).get('stale');
  return stale !== null && stale !== 'false';
}

/** Reads are GETs, plus the search routes (POST with a query body). */
function isRead(method: string, path: string): boolean {
  return method === 'GET' || method === 'HEAD' || path.startsWith('/v1/search');
}

/**
 * Decides where a request to this server goes (see the file comment). A read without ?stale is
 * answered only by the leader once it is ready for consistent reads, so a read after an
 * acknowledged write sees it; a follower that knows no leader refuses it (No cluster leader)
 * rather than answering from a state that may be behind.
 */
export function routeToLeader(method: string, url: string, headers: IncomingHttpHeaders, server: ServerApi): LeaderRoute {
  const path = url.split('?', 1)[0] ?? '';
  if (answeredByEveryServer(path)) return { kind: 'local' };
  const read = isRead(method, path);
  if (read && allowsStale(url)) return { kind: 'local' };
  if (server.isLeader()) {
    if (read && server.readyForConsistentReads && !server.readyForConsistentReads()) return { kind: 'not-ready' };
    return { kind: 'local' };
  }
  // Forwarded here by a follower, but this server no longer leads: a write fails on its own
  // (NOT_LEADER / NO_LEADER, which clients retry); a read must not be answered from here.
  if (headers[FORWARDED_TO_LEADER_HEADER] !== undefined) return read ? { kind: 'no-leader' } : { kind: 'local' };
  const address = server.leaderAddress();
  return address === '' ? { kind: 'no-leader' } : { kind: 'leader', address };
}

/**
 * Where a request whose forward to the leader(s) at `tried` never reached them goes next: a
 * route naming one of them is treated as no leader known (the view still names a dead leader
 * until its lease lapses), so the request is held until another leader is named, this server
 * leads, or the hold is over.
 */
export function awayFrom(route: LeaderRoute, tried: ReadonlySet<string>): LeaderRoute {
  return route.kind === 'leader' && tried.has(route.address) ? { kind: 'no-leader' } : route;
}

/**
 * Proxies requests to the current leader; one per agent. All forwards share one connection
 * pool whatever the leader (a forward replayed to the next leader may still be running when
 * others go to it).
 */
export class LeaderForwarder {
  private readonly proxy: ServerProxy;

  /** @param tls mutual TLS to the leader (the agent's `tls { rpc }`). */
  constructor(tls?: OutboundTls) {
    this.proxy = new ServerProxy({ servers: [], markHeader: FORWARDED_TO_LEADER_HEADER, ...(tls ? { tls } : {}) });
  }

  /**
   * Proxies `req` to the leader at `address`; resolves when the exchange is over. When the
   * leader could not be reached before any of the request was sent (its process is gone: the
   * connection is refused), `next` is asked where to replay it — another leader, or this
   * server's own address once it leads — and undefined answers the 503. A forward that failed
   * after its connection was made is never replayed: the leader may have applied the write.
   */
  forward(req: IncomingMessage, res: ServerResponse, address: string, next?: () => Promise<string | undefined>): Promise<void> {
    return this.proxy.proxy(req, res, { servers: [address], who: `this server (the leader is ${address})`, ...(next ? { whenUnreachable: next } : {}) });
  }

  close(): void {
    this.proxy.close();
  }
}
