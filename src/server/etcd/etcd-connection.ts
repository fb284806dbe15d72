/**
 * The connection to the etcd cluster that the etcd log backend and leadership share: endpoints,
 * TLS, the key prefix of this Caravan cluster, and client timeouts short enough that an etcd
 * outage shows as a clear error within seconds instead of a hung request.
 */
import { readFileSync } from 'node:fs';
import { Etcd3, isRecoverableError } from 'etcd3';
import { circuitBreaker, ConsecutiveBreaker, ExponentialBackoff, handleWhen, noop, retry } from 'cockatiel';

/** The `server { etcd { … } }` block of the agent config. */
export interface EtcdConfig {
  /** Client URLs, e.g. ["http://10.0.0.1:2379"]. */
  endpoints: string[];
  /** Key prefix of this Caravan cluster (several clusters can share one etcd). Default "/caravan/". */
  prefix?: string;
  /** TLS files (PEM): the CA that signed etcd's certificate, and a client certificate and key. */
  tls?: { caFile?: string; certFile?: string; keyFile?: string };
  /**
   * Seconds a leader's lease outlives its last keep-alive. Default 1: a dead leader is replaced
   * ~1–1.5 s after its death. etcd raises it to its own minimum, ceil(1.5 × election timeout):
   * 1 s needs etcd's --election-timeout ≤ 666 ms (its default, 1000 ms, makes it 2 s).
   */
  leaseTtlSeconds?: number;
}

export const DEFAULT_ETCD_PREFIX = '/caravan/';
/**
 * 1 s since the keep-alives run on a worker thread (worker-lease-keeper.ts): a server whose main
 * thread stalls no longer loses its lease, so the TTL is a failure detector for a dead process
 * only, and a failover's election is ~1 s shorter than with 2 s.
 */
export const DEFAULT_LEASE_TTL_SECONDS = 1;
/** A unary etcd call that takes longer than this fails (LOG_IO), so a write never hangs. */
const CALL_DEADLINE_MS = 5000;

/** gRPC keepalive pings on a connection to etcd (see openEtcdClient). */
export interface EtcdKeepalive {
  /** A ping after this long without one, while a call or stream is open (ms). */
  timeMs: number;
  /** The connection is dropped when a ping is not answered within this (ms). */
  timeoutMs: number;
}

/**
 * 10 s / 5 s: etcd refuses pings more often than every 5 s by default (its
 * --grpc-keepalive-min-time; it answers GOAWAY "too_many_pings"), and pings only while a call or
 * stream is open (etcd refuses pings without a stream as well).
 */
export const ETCD_KEEPALIVE: EtcdKeepalive = { timeMs: 10_000, timeoutMs: 5_000 };

/** The cluster prefix with exactly one trailing slash. */
export function etcdPrefix(config: EtcdConfig): string {
  const p = config.prefix && config.prefix.length > 0 ? config.prefix : DEFAULT_ETCD_PREFIX;
  return p.endsWith('/') ? p : `${p}/`;
}

/**
 * Opens a client for `config` (it connects lazily; nothing fails before the first call).
 *
 * A connection that dies silently (a member's host gone, a cable, a NAT's table) shows no error
 * on its own: unary calls have deadlines, but a watch or the keep-alive stream would wait for
 * TCP to give up (minutes to hours) — a follower whose watch is dead never learns of a new
 * leader. gRPC keepalive pings on open streams notice it within `keepalive.timeMs + timeoutMs`;
 * the streams then fail and their owners open them again (on another member if there is one).
 * `keepalive` is for tests (shorter times against an etcd that allows them).
 */
export function openEtcdClient(config: EtcdConfig, keepalive: EtcdKeepalive = ETCD_KEEPALIVE): Etcd3 {
  if (config.endpoints.length === 0) throw new Error('etcd.endpoints: at least one endpoint is required');
  const tls = config.tls;
  const credentials =
    tls && (tls.caFile || tls.certFile || tls.keyFile)
      ? {
          rootCertificate: readFileSync(requireFile(tls.caFile, 'etcd.tls.ca_file')),
          ...(tls.certFile ? { certChain: readFileSync(tls.certFile) } : {}),
          ...(tls.keyFile ? { privateKey: readFileSync(tls.keyFile) } : {}),
        }
      : undefined;
  return new Etcd3({
    hosts: config.endpoints,
    ...(credentials ? { credentials } : {}),
    dialTimeout: 3000,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + CALL_DEADLINE_MS }),
    // Log catch-up reads and snapshot pieces exceed gRPC's default 4 MiB receive limit.
    grpcOptions: {
      'grpc.max_receive_message_length': 256 * 1024 * 1024,
      'grpc.keepalive_time_ms': keepalive.timeMs,
      'grpc.keepalive_timeout_ms': keepalive.timeoutMs,
      'grpc.keepalive_permit_without_calls': 0,
    },
    faultHandling: {
      // Another endpoint is tried when one fails; a failed member is retried after 1 s (not the
      // client's default 5 s), and watches reconnect within 1 s once etcd is back.
      global: retry(handleWhen(isRecoverableError), { maxAttempts: Math.max(2, config.endpoints.length) }),
      // With a single endpoint there is nothing to fail over to: no breaker, every call tries.
      host: () =>
        config.endpoints.length === 1 ? noop : circuitBreaker(handleWhen(isRecoverableError), { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) }),
      // (typed as a backoff state; the client calls next() on it to get the first delay)
      watchBackoff: new ExponentialBackoff({ initialDelay: 50, maxDelay: 1000 }).next(),
    },
  });
}

function requireFile(path: string | undefined, field: string): string {
  if (!path) throw new Error(`${field}: required when a TLS client certificate is configured`);
  return path;
}
