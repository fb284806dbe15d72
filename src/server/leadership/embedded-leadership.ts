/**
 * The leadership of a single server on the embedded (SQLite) log: there is no one to elect, so
 * the server is the leader from start() until close(), and the only member of its cluster.
 */
import type { Leadership, ServerMember } from './leadership.js';

export interface EmbeddedLeadershipOptions {
  /** This server's ID and name (the agent's name). */
  name: string;
  /** This server's advertised HTTP "host:port" ("" until the agent listens). */
  address: () => string;
}

/** Always the leader once started (see the file comment). */
export class EmbeddedLeadership implements Leadership {
  private leader = false;
  private readonly listeners = new Set<(leader: boolean) => void>();

  constructor(private readonly opts: EmbeddedLeadershipOptions) {}

  async start(): Promise<void> {
    if (this.leader) return;
    this.leader = true;
    for (const l of [...this.listeners]) l(true);
  }

  isLeader(): boolean {
    return this.leader;
  }

  leaderAddress(): string | null {
    return this.leader ? this.opts.address() : null;
  }

  lastContactMs(): number {
    return 0;
  }

  onChange(listener: (leader: boolean) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  members(): ServerMember[] {
    return [{ id: this.opts.name, name: this.opts.name, address: this.opts.address(), leader: this.leader, status: 'alive' }];
  }

  async close(): Promise<void> {
    if (!this.leader) return;
    this.leader = false;
    for (const l of [...this.listeners]) l(false);
  }
}
