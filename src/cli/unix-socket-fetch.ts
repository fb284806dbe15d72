/**
 * The CLI over a Unix socket: `-address unix:///path/api.sock` (or NOMAD_ADDR), as Nomad's API
 * client takes it — what a task uses to reach the Task API at `${NOMAD_SECRETS_DIR}/api.sock`.
 * Requests go to `http://localhost` through node:http on the socket; the answer is a standard
 * Response whose body streams.
 */
import { request } from 'node:http';
import { Readable } from 'node:stream';

/** The scheme of a socket address. */
const UNIX_SCHEME = 'unix://';

/** The socket path of a `unix://` address, else undefined. */
export function unixSocketPath(address: string): string | undefined {
  return address.startsWith(UNIX_SCHEME) ? address.slice(UNIX_SCHEME.length) : undefined;
}

/** The base URL requests over a socket are written against (the host is not used to connect). */
export const UNIX_SOCKET_BASE = 'http://localhost';

/** A fetch that sends every request to the HTTP server on `socketPath`. String and byte bodies only. */
export function unixSocketFetch(socketPath: string): typeof fetch {
  const f = (input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    const method = (init.method ?? 'GET').toUpperCase();
    const signal = init.signal ?? undefined;
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => (headers[k] = v));
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new DOMException('This operation was aborted', 'AbortError'));
      const req = request({ socketPath, path: url.pathname + url.search, method, headers }, (res) => {
        const out = new Headers();
        for (const [k, v] of Object.entries(res.headers)) {
          if (Array.isArray(v)) for (const x of v) out.append(k, x);
          else if (v !== undefined) out.set(k, v);
        }
        const status = res.statusCode ?? 502;
        const empty = method === 'HEAD' || status === 204 || status === 304;
        if (empty) res.resume();
        resolve(new Response(empty ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, statusText: res.statusMessage ?? '', headers: out }));
      });
      // As the global fetch: network failures are a TypeError whose cause is the socket's error.
      req.on('error', (err) => reject(new TypeError('fetch failed', { cause: err })));
      signal?.addEventListener('abort', () => req.destroy(signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError')), { once: true });
      const body = init.body;
      if (body === undefined || body === null) req.end();
      else if (typeof body === 'string') req.end(body);
      else if (ArrayBuffer.isView(body)) req.end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
      else if (body instanceof ArrayBuffer) req.end(Buffer.from(body));
      else {
        req.destroy();
        reject(new TypeError('unixSocketFetch: only string and byte bodies are supported'));
      }
    });
  };
  return f as typeof fetch;
}
