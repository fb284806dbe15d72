/**
 * A `fetch` over node:http for the node simulator's clients: every simulated client sends its
 * requests through it (`forNode()`: one fetch per node), so the process holds one socket per held
 * blocking query — on the node's own connection state (an http.Agent per node), as a real client holds its query on its
 * own connection — a bounded, kept-alive pool for
 * heartbeats and another for everything else (registration, alloc updates). With the global fetch each burst
 * of 10,000 registrations would open 10,000 more sockets and the process would run out of file
 * descriptors; here the burst queues for the pool instead, as a real client's requests queue
 * behind its one multiplexed connection to Nomad's servers.
 *
 * Bodies are buffered whole (the clients read every answer with `text()`) and answered with
 * the part of a Response they read, not a streamed web Response. Only http:// is supported.
 */
import { Agent, request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { RequestGate } from './request-gate.js';

/** Options of pooledFetch. */
export interface PooledFetchOptions {
  /** Sockets for ordinary requests, per server (default 256). */
  maxSockets?: number;
  /** Sockets for heartbeats, per server (default 64). */
  heartbeatSockets?: number;
}

/** What the simulated nodes asked the servers, by kind (counted when sent). */
export interface RequestCounts {
  register: number;
  heartbeat: number;
  /** Held allocation watches (`client-allocs?index=`): one per wakeup or timeout. */
  watch: number;
  /** Allocations pulled after a watch named them changed. */
  fetchAllocs: number;
  /** Alloc update batches (`/v1/internal/allocs/update`). */
  allocUpdates: number;
  /** The node's dynamic host volumes, read when the watch says they moved. */
  hostVolumes: number;
  other: number;
}

/** The sockets the pool holds now (open), the requests queued for one, and the requests sent so far. */
export interface PoolStats {
  blockingSockets: number;
  shortSockets: number;
  heartbeatSockets: number;
  queued: number;
  requests: RequestCounts;
}

/** Fetches with their pools' statistics; `destroy()` closes every socket. */
export interface PooledFetch {
  /** A fetch for one simulated node: its held queries on its own connection state. */
  forNode(): typeof fetch;
  stats(): PoolStats;
  destroy(): void;
}

function kindOf(pathname: string, blocking: boolean): keyof RequestCounts {
  if (blocking) return pathname.endsWith('/client-allocs') ? 'watch' : 'other';
  if (pathname.endsWith('/heartbeat')) return 'heartbeat';
  if (pathname.endsWith('/node/register')) return 'register';
  if (pathname.endsWith('/allocs/update')) return 'allocUpdates';
  if (pathname.endsWith('/allocs')) return 'fetchAllocs';
  if (pathname.endsWith('/host-volumes')) return 'hostVolumes';
  return 'other';
}

function socketCount(agent: Agent): number {
  let n = 0;
  for (const list of Object.values(agent.sockets)) n += list?.length ?? 0;
  for (const list of Object.values(agent.freeSockets)) n += list?.length ?? 0;
  return n;
}

function queuedCount(agent: Agent): number {
  let n = 0;
  for (const list of Object.values(agent.requests)) n += list?.length ?? 0;
  return n;
}

/**
 * The part of a Response the clients read (status, headers, text(), json()) over a buffered
 * body. A web Response builds a ReadableStream per answer (and Node 20 makes each transferable):
 * ~3 % of the simulator's CPU in a 1,000-node profile went to building them.
 */
function bufferedResponse(status: number, statusText: string, headers: Headers, body: Buffer | null): Response {
  let used = false;
  const read = (): string => {
    if (used) throw new TypeError('Body is unusable: Body has already been read');
    used = true;
    return body ? body.toString('utf8') : '';
  };
  const res = {
    status,
    statusText,
    headers,
    ok: status >= 200 && status < 300,
    redirected: false,
    type: 'basic',
    url: '',
    get bodyUsed() {
      return used;
    },
    text: async () => read(),
    json: async () => JSON.parse(read()) as unknown,
  };
  return res as unknown as Response;
}

function headerRecord(h: HeadersInit | undefined): Record<string, string> {
  // The clients pass a plain record: sent as it is (a web Headers per request was measurable at 10,000 nodes).
  if (h && !(h instanceof Headers) && !Array.isArray(h)) return h as Record<string, string>;
  const out: Record<string, string> = {};
  if (h) new Headers(h).forEach((v, k) => (out[k] = v));
  return out;
}

/**
 * The answer's headers as the clients read them (`get`, `has`, iteration), over node:http's
 * already lower-cased record instead of a web Headers built per answer.
 */
function answerHeaders(raw: IncomingHttpHeaders): Headers {
  const value = (name: string): string | null => {
    const v = raw[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  };
  const entries = (): [string, string][] => Object.keys(raw).sort().map((k) => [k, value(k)!]);
  const h = {
    get: value,
    has: (name: string) => value(name) !== null,
    forEach: (fn: (v: string, k: string) => void) => entries().forEach(([k, v]) => fn(v, k)),
    entries,
    [Symbol.iterator]: () => entries()[Symbol.iterator](),
  };
  return h as unknown as Headers;
}

/** Creates the two shared pools and the per-node fetches that pick one: blocking queries (`?index=`) go on the node's own agent. */
export function pooledFetch(opts: PooledFetchOptions = {}): PooledFetch {
  // A held query must never wait behind the short pool (nor keep a heartbeat waiting): each node
  // holds it on its own agent, as a real client on its own connection. One agent for every
  // node's held query (as before) made each request's socket bookkeeping in node:http scan all
  // N sockets (Agent 'free' and removeSocket: indexOf over the host's socket list): O(N) a
  // request, O(N²) for the fleet — 3.5 s of the simulator's CPU in scenario 2 at 10,000 nodes.
  const nodeAgents: Agent[] = [];
  const shortSockets = opts.maxSockets ?? 256;
  const heartbeatSockets = opts.heartbeatSockets ?? 64;
  const short = new Agent({ keepAlive: true, maxSockets: shortSockets, maxFreeSockets: shortSockets });
  // Heartbeats never queue behind other clients' registrations and alloc updates: a real client's
  // heartbeat waits for no other node, and one held up past its TTL marks a healthy node down.
  const heartbeats = new Agent({ keepAlive: true, maxSockets: heartbeatSockets, maxFreeSockets: heartbeatSockets });
  // One gate per pool and server, as the agent's limit is per server.
  const gates = new Map<string, RequestGate>();
  const gateOf = (pool: string, host: string, limit: number): RequestGate => {
    const key = `${pool} ${host}`;
    let g = gates.get(key);
    if (!g) gates.set(key, (g = new RequestGate(limit)));
    return g;
  };
  const requests: RequestCounts = { register: 0, heartbeat: 0, watch: 0, fetchAllocs: 0, allocUpdates: 0, hostVolumes: 0, other: 0 };
  const send = (blocking: () => Agent, input: string | URL | Request, init: RequestInit = {}): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : input.toString());
    if (url.protocol !== 'http:') return Promise.reject(new TypeError(`pooledFetch: only http:// is supported, got ${url.protocol}`));
    const method = (init.method ?? 'GET').toUpperCase();
    const held = url.searchParams.has('index');
    requests[kindOf(url.pathname, held)]++;
    const agent = held ? blocking() : url.pathname.endsWith('/heartbeat') ? heartbeats : short;
    // The shared pools are entered through a gate per server (the agent's own queue is O(n) a request).
    const gate = held ? null : gateOf(agent === heartbeats ? 'h' : 's', url.host, agent === heartbeats ? heartbeatSockets : shortSockets);
    const signal = init.signal ?? undefined;
    const body = init.body;
    if (body !== undefined && body !== null && typeof body !== 'string') return Promise.reject(new TypeError('pooledFetch: only string bodies are supported'));
    const aborted = () => signal?.reason ?? new DOMException('This operation was aborted', 'AbortError');
    return new Promise<Response>((resolve, reject) => {
      if (signal?.aborted) return reject(aborted());
      if (!gate) return dispatch(resolve, reject, () => undefined);
      // A request aborted while it waits for a slot fails at once and gives its slot back when it gets one.
      const onWaitAbort = () => reject(aborted());
      signal?.addEventListener('abort', onWaitAbort, { once: true });
      gate.acquire(() => {
        signal?.removeEventListener('abort', onWaitAbort);
        if (signal?.aborted) return gate.release();
        dispatch(resolve, reject, () => gate.release());
      });
    });

    function dispatch(resolve: (r: Response) => void, reject: (e: unknown) => void, done: () => void): void {
      let req;
      try {
        req = request(url, { agent, method, headers: headerRecord(init.headers) }, onResponse);
      } catch (err) {
        done();
        return reject(err);
      }
      function onResponse(res: IncomingMessage): void {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', (err) => reject(new TypeError('fetch failed', { cause: err })));
        res.on('end', () => {
          const headers = answerHeaders(res.headers);
          const status = res.statusCode ?? 502;
          const empty = status === 204 || status === 304 || method === 'HEAD';
          resolve(bufferedResponse(status, res.statusMessage ?? '', headers, empty ? null : Buffer.concat(chunks)));
        });
      }
      // As the global fetch: network failures are a TypeError whose cause is the socket's error.
      req.on('error', (err) => reject(new TypeError('fetch failed', { cause: err })));
      // The client's stop signal outlives thousands of requests: each removes its listener when done.
      const r = req;
      const onAbort = () => r.destroy(signal?.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError'));
      signal?.addEventListener('abort', onAbort, { once: true });
      req.on('close', () => {
        signal?.removeEventListener('abort', onAbort);
        done();
      });
      req.end(body ?? undefined);
    }
  };
  return {
    forNode() {
      // Made on the node's first held query: one socket, kept alive between its queries.
      let own: Agent | null = null;
      const agent = (): Agent => {
        if (!own) {
          own = new Agent({ keepAlive: true, maxFreeSockets: 1 });
          nodeAgents.push(own);
        }
        return own;
      };
      return ((input: string | URL | Request, init?: RequestInit) => send(agent, input, init)) as typeof fetch;
    },
    stats() {
      let blockingSockets = 0;
      let queued = queuedCount(short) + queuedCount(heartbeats);
      for (const g of gates.values()) queued += g.queued();
      for (const a of nodeAgents) {
        blockingSockets += socketCount(a);
        queued += queuedCount(a);
      }
      return { blockingSockets, shortSockets: socketCount(short), heartbeatSockets: socketCount(heartbeats), queued, requests: { ...requests } };
    },
    destroy() {
      for (const a of nodeAgents) a.destroy();
      short.destroy();
      heartbeats.destroy();
    },
  };
}
