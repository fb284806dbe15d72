/**
 * The leadership port: which server of the cluster is the leader. Leader duties (eval broker,
 * plan applier, heartbeats, …) run only while isLeader() is true; the log's fencing check makes
 * sure a server that lost leadership can no longer append. The embedded backend's server is
 * always the leader; with etcd, leadership is an etcd lease and election.
 */

/** A server of the cluster as the leadership port knows it. */
export interface ServerMember {
  /** Stable server ID (the agent's name unless configured). */
  id: string;
  name: string;
  /** The server's advertised HTTP "host:port". */
  address: string;
  leader: boolean;
  /** alive while its lease holds; failed once it lapsed. */
  status: 'alive' | 'failed';
}

export interface Leadership {
  /** Registers this server and begins campaigning (the embedded port becomes leader at once). */
  start(): Promise<void>;
  isLeader(): boolean;
  /** The current leader's advertised "host:port", or null while there is none. */
  leaderAddress(): string | null;
  /**
   * The term of the leader this server knows (on etcd: its election key's create revision, which
   * grows with every election), or null while it knows none. Optional: the embedded port has one
   * leader forever. Reported as raft.term in /v1/agent/self, so a fault run can tell terms apart.
   */
  term?(): string | null;
  /** Milliseconds since this server last heard from the leader (0 on the leader itself). */
  lastContactMs(): number;
  /** Called whenever this server gains (true) or loses (false) leadership; returns an unsubscribe. */
  onChange(listener: (leader: boolean) => void): () => void;
  /**
   * Sets this server's advertised "host:port" once its agent listens (port 0 resolves late).
   * Optional: a port that registers no address needs none.
   */
  advertise?(address: string): void;
  /** The servers currently registered, this one included. */
  members(): ServerMember[];
  /**
   * The IDs of the servers campaigning, in the order they would lead (the leader first).
   * Optional: the embedded port has one server.
   */
  candidateOrder?(): string[];
  /** Gives up this server's leadership (if it leads) and campaigns again behind the others. Optional, as candidateOrder. */
  resign?(): void;
  /**
   * Removes a failed server from the member list every server keeps (Nomad's force-leave and
   * raft remove-peer). Resolves false when the server is alive or unknown (nothing removed).
   */
  forget?(id: string): Promise<boolean>;
  /** Resigns if leader, stops campaigning and deregisters. */
  close(): Promise<void>;
}
