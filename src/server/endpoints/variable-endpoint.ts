/**
 * The variable endpoint (Nomad's Variables.Apply): writes and deletes a variable at a path in a
 * namespace, with optional check-and-set. A stale check-and-set index is answered with the
 * variable as it is (an empty one when there is none), as Nomad answers a 409, and nothing
 * changes. The namespace must exist. Reads go straight to the state.
 */
import { admitVariable, variablePathProblem, VariableInvalidError, type Variable } from '../../structs/variable.js';
import { casHolds } from '../fsm/variable-fsm.js';
import { ServerError, type VariableWriteResult } from '../server-api.js';
import type { EndpointContext } from './endpoint-context.js';

/** The conflict Nomad answers when check-and-set expected a variable that is not there. */
function emptyVariable(): Variable {
  return { Namespace: '', Path: '', Items: {}, CreateIndex: 0, CreateTime: 0, ModifyIndex: 0, ModifyTime: 0 };
}

export class VariableEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  async setVariable(raw: unknown, namespace: string, path: string, cas?: number): Promise<VariableWriteResult> {
    const input = admitVariable(raw, namespace, path);
    this.requireNamespace(namespace);
    const { store } = this.ctx;
    // Checked here for the common case; the FSM checks again at apply (a writer may race us).
    const before = store.variableByPath(namespace, path);
    if (!casHolds(before, cas)) return { index: store.latestIndex(), conflict: before ?? emptyVariable() };
    const index = await this.ctx.apply({ Type: 'VariableSet', Variable: input, ...(cas !== undefined ? { Cas: cas } : {}), Now: this.ctx.nowNanos() });
    const after = store.variableByPath(namespace, path);
    if (after && after.ModifyIndex === index) return { index, written: after };
    return { index, conflict: after ?? emptyVariable() };
  }

  async deleteVariable(namespace: string, path: string, cas?: number): Promise<VariableWriteResult> {
    const problem = variablePathProblem(path);
    if (problem) throw new VariableInvalidError(problem);
    const { store } = this.ctx;
    const before = store.variableByPath(namespace, path);
    if (!casHolds(before, cas)) return { index: store.latestIndex(), conflict: before ?? emptyVariable() };
    const index = await this.ctx.apply({ Type: 'VariableDelete', Namespace: namespace, Path: path, ...(cas !== undefined ? { Cas: cas } : {}), Now: this.ctx.nowNanos() });
    const after = store.variableByPath(namespace, path);
    // Still there: another write landed first and this delete's check refused it.
    if (after && cas !== undefined) return { index, conflict: after };
    return { index };
  }

  private requireNamespace(namespace: string): void {
    if (!this.ctx.store.namespaceByName(namespace)) throw new ServerError('NAMESPACE_NOT_FOUND', { namespace });
  }
}
