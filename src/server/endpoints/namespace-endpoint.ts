/**
 * The namespace endpoint: create, update and delete namespaces (each one log command), and the
 * check every job submission passes — its namespace must exist and its capabilities must allow
 * the job's task drivers, as Nomad's job endpoint checks. Reads go straight to the state.
 */
import type { Job } from '../../structs/index.js';
import { namespaceFromInput, refusedTaskDriver } from '../../structs/namespace.js';
import { ServerError } from '../server-error.js';
import { namespaceDeleteRefusal } from '../fsm/namespace-fsm.js';
import type { StateStore } from '../state/state-store.js';
import type { EndpointContext } from './endpoint-context.js';

export class NamespaceEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** Creates or updates one namespace from its API JSON; NAMESPACE_INVALID names a bad field. */
  async upsert(input: unknown): Promise<{ index: number }> {
    const ns = namespaceFromInput(input);
    return { index: await this.ctx.apply({ Type: 'NamespaceUpsert', Namespaces: [ns], Now: this.ctx.nowNanos() }) };
  }

  /** Deletes a namespace: 404 when there is none, 400 for default or one holding non-terminal jobs. */
  async delete(name: string): Promise<{ index: number }> {
    if (!this.ctx.store.namespaceByName(name)) throw new ServerError('NAMESPACE_NOT_FOUND', { namespace: name });
    // Checked here for a clear answer; the FSM checks again at apply (a job may arrive meanwhile).
    const refusal = namespaceDeleteRefusal(this.ctx.store, name);
    if (refusal) throw refusal;
    return { index: await this.ctx.apply({ Type: 'NamespaceDelete', Names: [name], Now: this.ctx.nowNanos() }) };
  }
}

/**
 * Refuses a submitted job whose namespace does not exist or whose task drivers the namespace's
 * capabilities do not allow (Nomad's job endpoint checks, same texts).
 */
export function checkJobNamespace(store: StateStore, job: Job): void {
  const ns = store.namespaceByName(job.Namespace);
  if (!ns) throw new ServerError('NAMESPACE_NONEXISTENT', { job: job.ID, namespace: job.Namespace });
  const reason = refusedTaskDriver(ns, job.TaskGroups.flatMap((g) => g.Tasks.map((t) => t.Driver)));
  if (reason) throw new ServerError('NAMESPACE_CAPABILITY_REFUSED', { reason });
}
