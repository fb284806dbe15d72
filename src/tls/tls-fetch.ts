/**
 * A `fetch` for HTTPS with our own trust and client certificate. Node's global fetch takes no
 * CA or client certificate without the undici package; this one sends the request through
 * node:https with the given options and answers a standard Response whose body streams (log
 * follows, event streams). Plain http:// URLs go to the global fetch.
 */
import { request as httpsRequest, type Agent as HttpsAgent, type RequestOptions } from 'node:https';
import { Readable } from 'node:stream';

/** What the TLS connection uses: a pooling agent, or per-request options (the CLI's). */
export type TlsRequestOptions = { agent: HttpsAgent } | Omit<RequestOptions, 'method' | 'headers'>;

function headerRecord(h: HeadersInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!h) return out;
  new Headers(h).forEach((v, k) => {
    out[k] = v;
  });
  return out;
}

function bodyBytes(body: BodyInit | null | undefined): string | Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new TypeError('tlsFetch: only string and byte bodies are supported');
}

/** A fetch that uses `tls` for https:// URLs. */
export function tlsFetch(tls: TlsRequestOptions): typeof fetch {
  const f = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    if (url.protocol !== 'https:') return fetch(input, init);
    const method = (init.method ?? 'GET').toUpperCase();
    const signal = init.signal ?? undefined;
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new DOMException('This operation was aborted', 'AbortError'));
      const req = httpsRequest(url, { ...tls, method, headers: headerRecord(init.headers) }, (res) => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (Array.isArray(v)) for (const x of v) headers.append(k, x);
          else if (v !== undefined) headers.set(k, v);
        }
        const status = res.statusCode ?? 502;
        const empty = method === 'HEAD' || status === 204 || status === 304;
        if (empty) res.resume();
        const body = empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
        resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers }));
      });
      // As the global fetch: network failures are a TypeError whose cause is the socket's error.
      req.on('error', (err) => reject(new TypeError('fetch failed', { cause: err })));
      signal?.addEventListener('abort', () => req.destroy(signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError')), { once: true });
      const bytes = bodyBytes(init.body);
      req.end(bytes);
    });
  };
  return f as typeof fetch;
}
