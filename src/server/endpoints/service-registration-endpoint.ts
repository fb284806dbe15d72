/**
 * Service registration writes (Nomad's ServiceRegistration.Upsert / DeleteByID). Clients
 * register and deregister the services of their allocations, authenticated by their node's
 * SecretID: every registration must be of an allocation on that node, carry that allocation's
 * namespace and job, and an ID of that allocation — so no client can write, overwrite or
 * remove another node's (or another namespace's) registrations. An operator removes one
 * registration by ID (DELETE /v1/service/:name/:id; the route checks submit-job).
 */
import { isTerminalClientStatus } from '../../structs/alloc.js';
import {
  admitServiceRegistrations,
  NOMAD_SERVICE_ID_PREFIX,
  ServiceRegistrationInvalidError,
  type ServiceRegistrationInput,
} from '../../structs/service-registration.js';
import { ServerError } from '../server-error.js';
import { authenticateNode } from './node-endpoint.js';
import type { EndpointContext } from './endpoint-context.js';

/** At most this many registrations or IDs in one client call (a client sends a few per allocation). */
const MAX_BATCH = 1024;

export class ServiceRegistrationEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /**
   * Registers a client's service instances (`{Services: [...]}`); answers the index at which
   * they are visible. Registrations of allocations that already ended are dropped.
   */
  async upsertFromClient(raw: unknown, secretId: string): Promise<{ index: number }> {
    const regs = admitServiceRegistrations(raw);
    if (regs.length > MAX_BATCH) throw new ServiceRegistrationInvalidError('Services', `at most ${MAX_BATCH} per request`);
    const live: ServiceRegistrationInput[] = [];
    for (const r of regs) {
      if (this.authorize(r, secretId)) live.push(r);
    }
    if (live.length === 0) return { index: this.ctx.store.latestIndex() };
    const index = await this.ctx.apply({ Type: 'ServiceRegistrationUpsert', Services: live, Now: this.ctx.nowNanos() });
    return { index };
  }

  /** Removes registrations a client made (by ID); IDs already gone are skipped. */
  async deleteFromClient(raw: unknown, secretId: string): Promise<{ index: number }> {
    const ids = (raw as { IDs?: unknown } | null)?.IDs;
    if (!Array.isArray(ids) || !ids.every((x) => typeof x === 'string')) throw new ServiceRegistrationInvalidError('IDs', 'must be a list of registration IDs');
    if (ids.length > MAX_BATCH) throw new ServiceRegistrationInvalidError('IDs', `at most ${MAX_BATCH} per request`);
    const { store } = this.ctx;
    const mine: string[] = [];
    for (const id of ids as string[]) {
      const r = store.serviceRegistrationById(id);
      if (!r) continue;
      const node = store.nodeById(r.NodeID);
      if (!node) throw new ServerError('NODE_SECRET_MISMATCH', {});
      authenticateNode(node, secretId);
      mine.push(id);
    }
    if (mine.length === 0) return { index: store.latestIndex() };
    const index = await this.ctx.apply({ Type: 'ServiceRegistrationDelete', IDs: mine, Now: this.ctx.nowNanos() });
    return { index };
  }

  /** DELETE /v1/service/:name/:id: the registration must be of that service in that namespace. */
  async deleteById(namespace: string, serviceName: string, id: string): Promise<{ index: number }> {
    const r = this.ctx.store.serviceRegistrationById(id);
    if (!r || r.Namespace !== namespace || r.ServiceName !== serviceName) throw new ServerError('SERVICE_REGISTRATION_NOT_FOUND', {});
    const index = await this.ctx.apply({ Type: 'ServiceRegistrationDelete', IDs: [id], Now: this.ctx.nowNanos() });
    return { index };
  }

  /**
   * Whether `r` may be written by the holder of `secretId`: false for an allocation that is gone
   * or ended (dropped quietly — the client raced its end); 403 when the allocation is on another
   * node or the registration claims another namespace, job, node or allocation's ID.
   */
  private authorize(r: ServiceRegistrationInput, secretId: string): boolean {
    const { store } = this.ctx;
    const alloc = store.allocById(r.AllocID);
    if (!alloc) return false;
    const node = store.nodeById(alloc.NodeID);
    if (!node) throw new ServerError('NODE_SECRET_MISMATCH', {});
    authenticateNode(node, secretId);
    const prev = store.serviceRegistrationById(r.ID);
    if (
      r.NodeID !== alloc.NodeID ||
      r.Namespace !== alloc.Namespace ||
      r.JobID !== alloc.JobID ||
      !r.ID.startsWith(`${NOMAD_SERVICE_ID_PREFIX}${alloc.ID}-`) ||
      (prev !== undefined && prev.AllocID !== alloc.ID)
    ) {
      throw new ServerError('ACL_PERMISSION_DENIED', {});
    }
    return !isTerminalClientStatus(alloc.ClientStatus);
  }
}
