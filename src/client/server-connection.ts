/**
 * How a client talks to the servers: register, heartbeat, watch its allocations with a
 * blocking query, and send allocation updates. Two implementations: over HTTP (a client agent
 * with -servers, round-robin with failover) and in-process (-dev mode, no HTTP).
 */
import type { Allocation, Node, NodeStatus } from '../structs/index.js';
import { NANOS_PER_MS } from '../structs/duration.js';
import type { AllocClientUpdate } from '../structs/alloc.js';
import type { ServerApi } from '../server/server-api.js';
import { ServerError } from '../server/server-error.js';
import { nodeAllocsTableKey, nodeHostVolumesTableKey } from '../server/state/state-reader.js';
import { authenticateNodeRead, clientAllocIndexes, clientAllocsByIds, type ClientAllocIndexes } from '../server/client-alloc-reads.js';
import { ClientError, ClientErrorCode, errorMessage } from './client-error.js';
import { ERROR_CODE_HEADER } from '../structs/error-catalogue.js';
import { withScheme, type OutboundTls } from '../tls/tls-config.js';
import { tlsFetch } from '../tls/tls-fetch.js';
import type { TaskVariablesRequest, TaskVariablesResponse } from '../structs/task-variables.js';
import type { SignIdentitiesRequest, SignedIdentity } from '../structs/signed-identity.js';
import type { ServiceRegistrationInput } from '../structs/service-registration.js';
import type { HostVolume } from '../structs/dynamic-host-volume.js';
import type { HostVolumeClientReport } from '../server/endpoints/host-volume-endpoint.js';

/** What a client reports after acting on one of its node's dynamic host volumes. */
export type HostVolumeReport = HostVolumeClientReport;

/** The client's view of the servers. Errors are ClientError (NodeUnknown, ServerUnreachable, ServerRejected). */
export interface ServerConnection {
  /**
   * Registers (or re-registers) the node. `introToken` is presented for client introduction
   * (the servers check it only for a node they do not know yet); the in-process connection of
   * -dev needs none.
   */
  registerNode(node: Node, introToken?: string): Promise<{ heartbeatTtlMs: number }>;
  heartbeat(nodeId: string, status: NodeStatus): Promise<{ heartbeatTtlMs: number }>;
  /**
   * Blocking query (Nomad's Node.GetClientAllocs): the node's allocation IDs with their
   * AllocModifyIndex, when the node's allocs or dynamic host volumes change past afterIndex or
   * after timeoutMs. `hostVolumesIndex` is the index of the node's host volumes (Caravan's: the
   * client fetches them when it moves, so it holds this one blocking query only); undefined
   * when the server sent none.
   */
  watchAllocs(nodeId: string, afterIndex: number, timeoutMs: number, signal: AbortSignal): Promise<{ allocs: ClientAllocIndexes; index: number; hostVolumesIndex?: number }>;
  /**
   * The full allocations of `ids` on the node (Nomad's Alloc.GetAllocs); at most
   * MAX_ALLOC_IDS_PER_FETCH IDs. An ID the server no longer has on the node is left out.
   */
  fetchAllocs(nodeId: string, ids: string[], signal: AbortSignal): Promise<Allocation[]>;
  updateAllocs(updates: AllocClientUpdate[]): Promise<void>;
  /** A task's template reads of variables (blocking when req.MinIndex > 0). */
  readTaskVariables(req: TaskVariablesRequest, signal: AbortSignal): Promise<TaskVariablesResponse>;
  /** Signs a task's workload identities (Nomad's Alloc.SignIdentities). */
  signTaskIdentities(req: SignIdentitiesRequest, signal: AbortSignal): Promise<SignedIdentity[]>;
  /** Registers (or re-registers) native service instances of this node's allocations. */
  registerServices(services: ServiceRegistrationInput[]): Promise<void>;
  /** Removes native service registrations of this node's allocations, by ID. */
  deregisterServices(ids: string[]): Promise<void>;
  /** The dynamic host volumes placed on the node, read now (not a blocking query). */
  fetchHostVolumes?(nodeId: string, signal: AbortSignal): Promise<HostVolume[]>;
  /** Reports what the node did with one of its dynamic host volumes. */
  reportHostVolume?(report: HostVolumeReport): Promise<void>;
  /** The servers this client talks to ("host:port"), configured first, then learned ones. */
  servers(): string[];
  /** Replaces the configured servers (`node config -update-servers`); ClientError when not possible. */
  setServers(servers: string[]): void;
}

function ttlMs(ns: number): number {
  return Math.max(1, Math.round(ns / NANOS_PER_MS));
}

/** Maps a server-side error to the client's error codes. */
function fromServerError(err: unknown, what: string): never {
  if (err instanceof ClientError) throw err;
  if (err instanceof ServerError) {
    if (err.code === 'NODE_NOT_FOUND') throw new ClientError(ClientErrorCode.NodeUnknown, `${what}: ${err.message}`, { cause: err });
    throw new ClientError(ClientErrorCode.ServerRejected, `${what}: ${err.message}`, { cause: err });
  }
  throw new ClientError(ClientErrorCode.ServerRejected, `${what}: ${errorMessage(err)}`, { cause: err });
}

/** A connection to a server in the same process (-dev mode). */
export function inProcessServerConnection(server: ServerApi): ServerConnection {
  // The node's SecretID, sent with every later call as Nomad's clients do.
  let secretId = '';
  return {
    servers: () => [],
    setServers() {
      throw new ClientError(ClientErrorCode.ServerRejected, 'this client runs inside its server (-dev): it has no server list to update');
    },
    async registerNode(node) {
      secretId = node.SecretID;
      try {
        // The agent's own client, in its server's process: nothing to introduce.
        const r = await server.registerNode(node, { inProcess: true });
        return { heartbeatTtlMs: ttlMs(r.heartbeatTtl) };
      } catch (err) {
        return fromServerError(err, 'register node');
      }
    },
    async heartbeat(nodeId, status) {
      if (!server.state.nodeById(nodeId)) throw new ClientError(ClientErrorCode.NodeUnknown, `node ${nodeId} is not registered`);
      try {
        const r = await server.heartbeatNode(nodeId, status, secretId);
        return { heartbeatTtlMs: ttlMs(r.heartbeatTtl) };
      } catch (err) {
        return fromServerError(err, 'heartbeat');
      }
    },
    async watchAllocs(nodeId, afterIndex, timeoutMs, signal) {
      // As GET /v1/internal/node/:id/client-allocs: woken by this node's allocations and host volumes only.
      const watched = [nodeAllocsTableKey(nodeId), nodeHostVolumesTableKey(nodeId)];
      try {
        authenticateNodeRead(server.state, nodeId, secretId);
      } catch (err) {
        return fromServerError(err, 'watch allocations');
      }
      const current = (): number => Math.max(...watched.map((t) => server.state.tableIndex(t)));
      let index = current();
      if (index <= afterIndex) index = await server.waitForChange(watched, afterIndex, timeoutMs, signal);
      return {
        allocs: clientAllocIndexes(server.state, nodeId),
        index: Math.max(1, index, current()),
        hostVolumesIndex: server.state.tableIndex(watched[1]!),
      };
    },
    async fetchAllocs(nodeId, ids) {
      try {
        authenticateNodeRead(server.state, nodeId, secretId);
        return clientAllocsByIds(server.state, nodeId, ids);
      } catch (err) {
        return fromServerError(err, 'fetch allocations');
      }
    },
    async fetchHostVolumes(nodeId) {
      // As GET /v1/internal/node/:id/host-volumes without an index.
      try {
        authenticateNodeRead(server.state, nodeId, secretId);
      } catch (err) {
        return fromServerError(err, 'read host volumes');
      }
      return server.state.hostVolumesByNode(nodeId);
    },
    async reportHostVolume(report) {
      if (!server.hostVolumes) throw new ClientError(ClientErrorCode.ServerRejected, 'the server has no dynamic host volumes');
      try {
        await server.hostVolumes.reportFromClient(report, secretId);
      } catch (err) {
        fromServerError(err, 'report host volume');
      }
    },
    async updateAllocs(updates) {
      try {
        // The server keeps what it is given: a copy, so that it shares no task state with the alloc runners.
        await server.updateAllocsFromClient(structuredClone(updates), secretId);
      } catch (err) {
        fromServerError(err, 'update allocs');
      }
    },
    async registerServices(services) {
      if (!server.serviceRegistrations) throw new ClientError(ClientErrorCode.ServerRejected, 'the server has no service registrations');
      try {
        await server.serviceRegistrations.upsertFromClient({ Services: services }, secretId);
      } catch (err) {
        fromServerError(err, 'register services');
      }
    },
    async deregisterServices(ids) {
      if (!server.serviceRegistrations) throw new ClientError(ClientErrorCode.ServerRejected, 'the server has no service registrations');
      try {
        await server.serviceRegistrations.deleteFromClient({ IDs: ids }, secretId);
      } catch (err) {
        fromServerError(err, 'deregister services');
      }
    },
    async readTaskVariables(req, signal) {
      if (!server.taskVariables) throw new ClientError(ClientErrorCode.ServerRejected, 'the server has no variables');
      try {
        return await server.taskVariables.read(req, secretId, signal);
      } catch (err) {
        return fromServerError(err, 'read variables');
      }
    },
    async signTaskIdentities(req) {
      if (!server.workloadIdentities) throw new ClientError(ClientErrorCode.ServerRejected, 'the server signs no workload identities');
      try {
        return await server.workloadIdentities.sign(req, secretId);
      } catch (err) {
        return fromServerError(err, 'sign workload identities');
      }
    },
  };
}

/** How long the HTTP connection waits before retrying when every server is unreachable. */
const RETRY_BASE_MS = 250;
const RETRY_ROUNDS = 3;

/**
 * A connection over Nomad's HTTP API to one of `servers` ("host:port" or URLs) and every server
 * they report (learnt from registration and heartbeat answers). Requests go to the current
 * server; on a network error or 5xx the next one is tried, for a few rounds with backoff, before
 * failing with ServerUnreachable. `fetchFn` replaces how requests are sent (the node simulator
 * sends many clients' requests through one bounded socket pool); default the global fetch, or
 * tlsFetch with `tls`.
 */
export function httpServerConnection(servers: string[], token?: string, tls?: OutboundTls, fetchFn?: typeof fetch): ServerConnection {
  if (servers.length === 0) throw new ClientError(ClientErrorCode.NoServers, 'no servers configured');
  // With TLS, bare host:port servers are reached over HTTPS, presenting the agent's certificate.
  const toBase = (s: string): string => withScheme(/^https?:\/\//.test(s) ? s.replace(/\/+$/, '') : `http://${s}`, tls !== undefined);
  const send = fetchFn ?? (tls ? tlsFetch({ agent: tls.serverAgent }) : fetch);
  let configured = servers.map(toBase);
  // The configured servers, then those the servers told us of (every server of the cluster).
  let bases = [...configured];
  let current = 0;
  // The node's SecretID authenticates the internal calls (as Nomad's clients authenticate their
  // Node.* RPCs); public reads carry the ACL token.
  let secretId = '';

  async function request(method: string, path: string, body: unknown, signal?: AbortSignal, auth = token): Promise<{ json: unknown; headers: Headers }> {
    let lastErr: unknown = null;
    for (let round = 0; round < RETRY_ROUNDS; round++) {
      for (let i = 0; i < bases.length; i++) {
        const base = bases[current]!;
        try {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (auth) headers['X-Nomad-Token'] = auth;
          const res = await send(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
          const text = await res.text();
          // Matched by the error's code (sent beside the text); a server that sends none is matched as Nomad's by status.
          const code = res.headers.get(ERROR_CODE_HEADER);
          if (code === 'NODE_NOT_FOUND' || (code === null && res.status === 404)) throw new ClientError(ClientErrorCode.NodeUnknown, `${method} ${path}: ${text.trim() || 'not found'}`);
          if (res.status >= 400 && res.status < 500) throw new ClientError(ClientErrorCode.ServerRejected, `${method} ${path}: ${res.status} ${text.trim()}`);
          if (res.status >= 500) throw new Error(`${base}: ${res.status} ${text.trim()}`);
          return { json: text ? (JSON.parse(text) as unknown) : null, headers: res.headers };
        } catch (err) {
          if (err instanceof ClientError || signal?.aborted) throw err;
          lastErr = err;
          current = (current + 1) % bases.length;
        }
      }
      await new Promise((r) => setTimeout(r, RETRY_BASE_MS * 2 ** round));
    }
    throw new ClientError(ClientErrorCode.ServerUnreachable, `no server reachable (${bases.join(', ')}): ${errorMessage(lastErr)}`, { cause: lastErr });
  }

  /**
   * Learns the cluster's servers from a registration or heartbeat answer (Nomad's
   * NodeUpdateResponse.Servers): the configured ones stay, learned ones follow the cluster.
   */
  function learnServers(json: unknown): void {
    const listed = (json as { Servers?: unknown } | null)?.Servers;
    if (!Array.isArray(listed)) return;
    const learned = listed
      .map((s) => (s as { RPCAdvertiseAddr?: unknown } | null)?.RPCAdvertiseAddr)
      .filter((a): a is string => typeof a === 'string' && a !== '')
      // A bare "host:port" is reached the way the configured servers are (http or https).
      .map((a) => (/^https?:\/\//.test(a) ? toBase(a) : `${new URL(configured[0]!).protocol}//${a}`));
    const next = [...configured, ...learned.filter((b) => !configured.includes(b))];
    if (next.length === bases.length && next.every((b, i) => b === bases[i])) return;
    const using = bases[current];
    bases = next;
    current = Math.max(0, using === undefined ? 0 : bases.indexOf(using));
  }

  function ttlOf(json: unknown): { heartbeatTtlMs: number } {
    learnServers(json);
    const ns = Number((json as { HeartbeatTTL?: number } | null)?.HeartbeatTTL ?? 0);
    return { heartbeatTtlMs: ns > 0 ? ttlMs(ns) : 10_000 };
  }

  return {
    servers: () => bases.map((b) => b.replace(/^https?:\/\//, '')),
    setServers(list) {
      if (list.length === 0) throw new ClientError(ClientErrorCode.NoServers, 'no servers given');
      configured = list.map(toBase);
      bases = [...configured];
      current = 0;
    },
    async registerNode(node, introToken) {
      secretId = node.SecretID;
      // The introduction token goes as the token (as Nomad's first Node.Register carries it); a
      // registered node is known by the SecretID in the body, so a stale token does no harm.
      const { json } = await request('PUT', '/v1/internal/node/register', { Node: node }, undefined, introToken || secretId);
      return ttlOf(json);
    },
    async heartbeat(nodeId, status) {
      const { json } = await request('PUT', `/v1/internal/node/${encodeURIComponent(nodeId)}/heartbeat`, { Status: status }, undefined, secretId);
      return ttlOf(json);
    },
    async watchAllocs(nodeId, afterIndex, timeoutMs, signal) {
      const wait = `${Math.max(1, Math.round(timeoutMs / 1000))}s`;
      // IDs and indexes only, read with the node's SecretID; the changed ones are fetched after.
      const { json, headers } = await request('GET', `/v1/internal/node/${encodeURIComponent(nodeId)}/client-allocs?index=${afterIndex}&wait=${wait}`, undefined, signal, secretId);
      const index = Number(headers.get('X-Nomad-Index') ?? afterIndex);
      const body = json as { Allocs?: unknown; HostVolumesIndex?: unknown } | null;
      const listed = body?.Allocs;
      const volumesIndex = body?.HostVolumesIndex;
      return {
        allocs: listed !== null && typeof listed === 'object' ? (listed as ClientAllocIndexes) : {},
        index: Number.isFinite(index) ? index : afterIndex,
        ...(typeof volumesIndex === 'number' ? { hostVolumesIndex: volumesIndex } : {}),
      };
    },
    async fetchAllocs(nodeId, ids, signal) {
      const { json } = await request('PUT', `/v1/internal/node/${encodeURIComponent(nodeId)}/allocs`, { AllocIDs: ids }, signal, secretId);
      const allocs = (json as { Allocs?: unknown } | null)?.Allocs;
      return Array.isArray(allocs) ? (allocs as Allocation[]) : [];
    },
    async updateAllocs(updates) {
      await request('PUT', '/v1/internal/allocs/update', { Allocs: updates }, undefined, secretId);
    },
    async fetchHostVolumes(nodeId, signal) {
      // Without an index: answered at once, so it holds no socket while nothing changes.
      const { json } = await request('GET', `/v1/internal/node/${encodeURIComponent(nodeId)}/host-volumes`, undefined, signal, secretId || token);
      return Array.isArray(json) ? (json as HostVolume[]) : [];
    },
    async reportHostVolume(report) {
      await request('PUT', '/v1/internal/host-volumes/report', report, undefined, secretId);
    },
    async registerServices(services) {
      await request('PUT', '/v1/internal/services/register', { Services: services }, undefined, secretId);
    },
    async deregisterServices(ids) {
      await request('PUT', '/v1/internal/services/deregister', { IDs: ids }, undefined, secretId);
    },
    async readTaskVariables(req, signal) {
      const { json } = await request('PUT', '/v1/internal/task/variables', req, signal, secretId);
      return json as TaskVariablesResponse;
    },
    async signTaskIdentities(req, signal) {
      const { json } = await request('PUT', '/v1/internal/task/identities', req, signal, secretId);
      return ((json as { Identities?: SignedIdentity[] } | null)?.Identities ?? []);
    },
  };
}
