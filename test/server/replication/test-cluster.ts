/**
 * Two or more real Servers on one shared log, with a leadership the test decides: the servers
 * apply the same committed entries (the log's subscription), and `elect` moves leadership the way
 * an election would — the old leader hears it lost, then the new one hears it won.
 */
import type { Leadership, ServerMember } from '../../../src/server/leadership/leadership.js';
import type { LogBackend } from '../../../src/server/log/log-backend.js';

/** The cluster's leadership, shared by every member's SwitchedLeadership. */
export class LeadershipSwitch {
  private readonly members = new Map<string, SwitchedLeadership>();
  leader: string | null = null;

  /** The Leadership port of the member `name` reachable at `address`. */
  member(name: string, address: string): SwitchedLeadership {
    const m = new SwitchedLeadership(this, name, address);
    this.members.set(name, m);
    return m;
  }

  /** Makes `name` the leader (null: nobody), telling the loser first, then the winner. */
  elect(name: string | null): void {
    const old = this.leader;
    if (old === name) return;
    this.leader = name;
    if (old) this.members.get(old)?.notify(false);
    if (name) this.members.get(name)?.notify(true);
  }

  list(): ServerMember[] {
    return [...this.members.values()].map((m) => ({ id: m.name, name: m.name, address: m.address, leader: m.name === this.leader, status: 'alive' as const }));
  }

  addressOf(name: string | null): string | null {
    return name ? (this.members.get(name)?.address ?? null) : null;
  }
}

/** One member's view of the switch. */
export class SwitchedLeadership implements Leadership {
  private readonly listeners = new Set<(leader: boolean) => void>();

  constructor(
    private readonly cluster: LeadershipSwitch,
    readonly name: string,
    public address: string,
  ) {}

  advertise(address: string): void {
    this.address = address;
  }

  async start(): Promise<void> {}
  isLeader(): boolean {
    return this.cluster.leader === this.name;
  }
  leaderAddress(): string | null {
    return this.cluster.addressOf(this.cluster.leader);
  }
  lastContactMs(): number {
    return 0;
  }
  onChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }
  members(): ServerMember[] {
    return this.cluster.list();
  }
  async close(): Promise<void> {
    if (this.isLeader()) this.cluster.elect(null);
  }
  notify(leader: boolean): void {
    for (const l of [...this.listeners]) l(leader);
  }
}

/**
 * One server's handle on a log shared with others: everything goes to `log` except close(), which
 * only the test does once every server has closed (a Server closes the log it is given).
 */
export function sharedLog(log: LogBackend): LogBackend {
  return {
    append: (entries) => log.append(entries),
    subscribe: (from, sub) => log.subscribe(from, sub),
    read: (from, to) => log.read(from, to),
    lastIndex: () => log.lastIndex(),
    saveSnapshot: (index, data) => log.saveSnapshot(index, data),
    loadLatestSnapshot: () => log.loadLatestSnapshot(),
    ...(log.beginSnapshot ? { beginSnapshot: (index: number) => log.beginSnapshot!(index) } : {}),
    ...(log.openLatestSnapshot ? { openLatestSnapshot: () => log.openLatestSnapshot!() } : {}),
    compact: (upTo) => log.compact(upTo),
    close: async () => undefined,
  };
}

/** A shared log whose deliveries to one server can be held back (a follower lagging behind). */
export interface LaggingLog extends LogBackend {
  /** Holds every delivery from now on until release(). */
  hold(): void;
  /** Delivers what was held, in order, and stops holding. */
  release(): void;
}

/** sharedLog(log) whose subscription deliveries can be held (see LaggingLog). */
export function laggingLog(log: LogBackend): LaggingLog {
  const base = sharedLog(log);
  let holding = false;
  const held: (() => void)[] = [];
  return {
    ...base,
    subscribe: (from, sub) =>
      log.subscribe(from, {
        onEntries: (entries) => (holding ? held.push(() => sub.onEntries(entries)) : sub.onEntries(entries)),
        onError: (err) => (holding ? held.push(() => sub.onError(err)) : sub.onError(err)),
      }),
    hold: () => void (holding = true),
    release: () => {
      holding = false;
      for (const deliver of held.splice(0)) deliver();
    },
  };
}
