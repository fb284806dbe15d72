/**
 * One probe of a native service check, as Nomad's client runs them: `http` sends the check's
 * method (GET by default), headers and body to `http://address:port/path` and passes on a 2xx
 * answer; `tcp` passes when a connection opens. Both fail when the check's timeout passes first.
 * The output is what Nomad shows: the answer's body (capped) or the error.
 */
import { connect } from 'node:net';
import type { ServiceCheck } from '../../structs/service.js';

/** Nomad's check statuses. */
export const CheckStatus = { Success: 'success', Failure: 'failure', Pending: 'pending' } as const;
export type CheckStatus = (typeof CheckStatus)[keyof typeof CheckStatus];

/** What one probe found. */
export interface ProbeResult {
  status: CheckStatus;
  output: string;
  /** The HTTP status of an http check's answer (0: none). */
  statusCode: number;
}

/** Where and how long to probe. */
export interface ProbeTarget {
  address: string;
  port: number;
  timeoutMs: number;
}

/** How much of an answer's body a result keeps. */
const MAX_OUTPUT = 4096;

/** An address as a URL host ("::1" → "[::1]"). */
function urlHost(address: string): string {
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
}

async function probeHttp(check: ServiceCheck, t: ProbeTarget): Promise<ProbeResult> {
  const path = check.Path.startsWith('/') ? check.Path : `/${check.Path}`;
  const url = `${check.Protocol === 'https' ? 'https' : 'http'}://${urlHost(t.address)}:${t.port}${path}`;
  const headers = new Headers();
  for (const [k, values] of Object.entries(check.Header ?? {})) for (const v of values) headers.append(k, v);
  const method = check.Method || 'GET';
  try {
    const res = await fetch(url, {
      method,
      headers,
      ...(check.Body && method !== 'GET' && method !== 'HEAD' ? { body: check.Body } : {}),
      signal: AbortSignal.timeout(t.timeoutMs),
      redirect: 'manual',
    });
    const text = (await res.text()).slice(0, MAX_OUTPUT);
    const ok = res.status >= 200 && res.status < 300;
    return { status: ok ? CheckStatus.Success : CheckStatus.Failure, output: text || `HTTP ${res.status}`, statusCode: res.status };
  } catch (err) {
    const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string };
    const why = e.name === 'TimeoutError' ? `timeout after ${t.timeoutMs}ms` : (e.cause?.code ?? e.cause?.message ?? e.message ?? String(err));
    return { status: CheckStatus.Failure, output: `${method} ${url}: ${why}`, statusCode: 0 };
  }
}

function probeTcp(t: ProbeTarget): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const sock = connect({ host: t.address, port: t.port });
    const done = (r: ProbeResult): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => done({ status: CheckStatus.Failure, output: `dial tcp ${t.address}:${t.port}: timeout after ${t.timeoutMs}ms`, statusCode: 0 }), t.timeoutMs);
    sock.once('connect', () => done({ status: CheckStatus.Success, output: 'nomad: tcp ok', statusCode: 0 }));
    sock.once('error', (err: NodeJS.ErrnoException) => done({ status: CheckStatus.Failure, output: `dial tcp ${t.address}:${t.port}: ${err.code ?? err.message}`, statusCode: 0 }));
  });
}

/** Runs one probe of `check` (an http or tcp check) against `t`. */
export function probeCheck(check: ServiceCheck, t: ProbeTarget): Promise<ProbeResult> {
  if (check.Type === 'http') return probeHttp(check, t);
  if (check.Type === 'tcp') return probeTcp(t);
  return Promise.resolve({ status: CheckStatus.Failure, output: `check type "${check.Type}" is not run by Caravan's client`, statusCode: 0 });
}
