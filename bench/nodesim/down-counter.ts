/**
 * Counts, as they happen, the nodes the servers mark down and the allocations lost with them,
 * over windows of a bench run (a scenario, the kill of scenario 5, the whole run). Reading the
 * cluster at a window's end is not enough: a node marked down and ready again, or an allocation
 * lost and replaced, leaves nothing in the end state's node statuses or job summaries.
 *
 * How:
 * - Nodes: one subscription to the event stream's Node topic (`/v1/event/stream?topic=Node`),
 *   from any server given (followers publish the log's events too, so after a kill it resumes
 *   from the last index on another). A `NodeEvent` whose node is `down`, for a node not already
 *   down, is one transition, dated by the server's own node event ("Node heartbeat missed").
 *   The Node topic is cheap at 10,000 nodes: a heartbeat publishes nothing, only registrations
 *   and status, eligibility and drain changes do. The Allocation topic is not subscribed: every
 *   placement and client update of 50,000 allocations is an event carrying its allocation.
 * - Allocations: only nodes marked down lose allocations, so when a window closes the counter
 *   reads the allocations of the nodes marked down in it (`/v1/node/:id/allocations`) and counts
 *   those the servers marked lost: ClientStatus "lost", or the scheduler's description "alloc is
 *   lost since its node is down" — a client that comes back reports its stopped allocation
 *   "complete" over the "lost", and the description is what is left. Those already lost when the
 *   window opened (a node down twice) are not counted again.
 */
import { request, type IncomingMessage } from 'node:http';
import { api } from '../../test/integration/helpers/agent-process.js';

/** What the scheduler writes on an allocation lost with its node (src/scheduler/descriptions.ts). */
export const LOST_DESCRIPTION = 'alloc is lost since its node is down';

/** One node's transition to down. */
export interface DownTransition {
  nodeId: string;
  /** When the server marked it (ms since the epoch; its node event's timestamp). */
  at: number;
  /** The log index of the change. */
  index: number;
}

/** What a window saw. */
export interface DownFigures {
  /** Transitions to down (a node down twice counts twice). */
  nodesMarkedDown: number;
  /** Distinct nodes among them. */
  nodes: number;
  /** Allocations lost on those nodes in the window. */
  allocsLost: number;
  /** Times the stream broke and was resumed from its last index (a gap is possible only then). */
  resumed: number;
}

/** A window of the run, opened by `DownCounter.open()`. */
export interface DownWindow {
  /** Counts what happened from its opening until now (it can be closed more than once). */
  close(): Promise<DownFigures>;
}

interface NodePayload {
  ID?: string;
  Status?: string;
  Events?: { Message?: string; Timestamp?: string }[] | null;
}

interface StreamFrame {
  Index?: number;
  Events?: { Topic?: string; Type?: string; Index?: number; Payload?: { Node?: NodePayload } }[];
  Error?: string;
}

interface AllocStub {
  ID: string;
  ClientStatus: string;
  DesiredDescription?: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Splits a stream of concatenated JSON objects (the event stream writes `{…}{…}{}` with no
 * separator, as Nomad's does) into complete objects; keeps the incomplete tail for the next chunk.
 */
export class JsonObjectSplitter {
  private buf = '';
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scanned = 0;

  push(chunk: string): string[] {
    this.buf += chunk;
    const out: string[] = [];
    let start = 0;
    for (let i = this.scanned; i < this.buf.length; i++) {
      const c = this.buf[i];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
      } else if (c === '"') this.inString = true;
      else if (c === '{') this.depth++;
      else if (c === '}' && --this.depth === 0) {
        out.push(this.buf.slice(start, i + 1).trim());
        start = i + 1;
      }
    }
    this.buf = this.buf.slice(start);
    this.scanned = this.buf.length;
    return out;
  }
}

function isLost(a: AllocStub): boolean {
  return a.ClientStatus === 'lost' || a.DesiredDescription === LOST_DESCRIPTION;
}

/** See the file comment. */
export class DownCounter {
  private readonly transitions: DownTransition[] = [];
  private readonly status = new Map<string, string>();
  private lastIndex = 0;
  private resumed = 0;
  private stopped = false;
  private current: IncomingMessage | null = null;
  private readonly loop: Promise<void>;
  private connected!: () => void;
  private readonly firstConnect = new Promise<void>((r) => (this.connected = r));

  /** `addresses()` lists the live servers ("host:port" or "http://host:port"), read on every (re)connection. */
  private constructor(private readonly addresses: () => string[]) {
    this.loop = this.follow();
  }

  /** Subscribes and resolves once the stream is open: nothing from then on is missed. */
  static async start(addresses: () => string[]): Promise<DownCounter> {
    const c = new DownCounter(addresses);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('the event stream did not open in 30 s')), 30_000);
    });
    try {
      await Promise.race([c.firstConnect, timeout]);
    } catch (err) {
      await c.stop();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return c;
  }

  /** Every transition to down seen so far. */
  all(): readonly DownTransition[] {
    return this.transitions;
  }

  /** Opens a window now; its lost allocations exclude those already lost at its opening. */
  async open(): Promise<DownWindow> {
    const from = Date.now();
    const before = await this.lostOn(new Set(this.transitions.map((t) => t.nodeId)));
    const resumedBefore = this.resumed;
    return {
      close: async () => {
        const seen = this.transitions.filter((t) => t.at >= from);
        const nodes = new Set(seen.map((t) => t.nodeId));
        const lost = await this.lostOn(nodes);
        let allocsLost = 0;
        for (const id of lost) if (!before.has(id)) allocsLost++;
        return { nodesMarkedDown: seen.length, nodes: nodes.size, allocsLost, resumed: this.resumed - resumedBefore };
      },
    };
  }

  /** Ends the subscription. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.current?.destroy();
    await this.loop;
  }

  /** IDs of the lost allocations on `nodes`, read from the first server that answers. */
  private async lostOn(nodes: Set<string>): Promise<Set<string>> {
    const out = new Set<string>();
    for (const nodeId of nodes) {
      for (const addr of this.addresses()) {
        const r = await api<AllocStub[]>(withScheme(addr), 'GET', `/v1/node/${nodeId}/allocations`).catch(() => null);
        if (r?.status !== 200) continue;
        for (const a of r.body) if (isLost(a)) out.add(a.ID);
        break;
      }
    }
    return out;
  }

  /** Follows the stream, resuming from the last index on the next server when it breaks. */
  private async follow(): Promise<void> {
    for (let k = 0; !this.stopped; k++) {
      const list = this.addresses();
      const addr = list[k % Math.max(1, list.length)];
      if (addr !== undefined) {
        const ended = await this.subscribe(withScheme(addr)).catch(() => false);
        if (this.stopped) return;
        if (ended) this.resumed++;
      }
      await sleep(200);
    }
  }

  /** One subscription; resolves true when it had opened and then ended, false when it never opened. */
  private subscribe(addr: string): Promise<boolean> {
    return new Promise((resolve, reject) => {
      const url = new URL(`${addr}/v1/event/stream?topic=Node&index=${this.lastIndex}`);
      const req = request(url, { method: 'GET' }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          resolve(false);
          return;
        }
        this.current = res;
        this.connected();
        const split = new JsonObjectSplitter();
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          for (const text of split.push(chunk)) this.onFrame(JSON.parse(text) as StreamFrame);
        });
        res.on('close', () => resolve(true));
        res.on('error', () => resolve(true));
      });
      req.on('error', reject);
      req.end();
    });
  }

  private onFrame(f: StreamFrame): void {
    for (const e of f.Events ?? []) {
      const n = e.Payload?.Node;
      if (e.Topic !== 'Node' || !n?.ID || !n.Status) continue;
      const was = this.status.get(n.ID);
      this.status.set(n.ID, n.Status);
      if (n.Status === 'down' && was !== 'down' && e.Type === 'NodeEvent') {
        const stamp = Date.parse(n.Events?.at(-1)?.Timestamp ?? '');
        this.transitions.push({ nodeId: n.ID, at: Number.isNaN(stamp) ? Date.now() : stamp, index: e.Index ?? f.Index ?? 0 });
      }
    }
    if (f.Index !== undefined) this.lastIndex = Math.max(this.lastIndex, f.Index);
  }
}

function withScheme(addr: string): string {
  return addr.startsWith('http') ? addr : `http://${addr}`;
}
