/**
 * The node endpoint: a client's registration and heartbeats (authenticated with the node's
 * SecretID, as Nomad's Node.* RPCs are), eligibility, drains, and the leader marking a node down
 * when its heartbeat timer expires.
 */
import type { Node, NodeEligibility, NodeStatus } from '../../structs/index.js';
import { admitHeartbeatStatus, admitNodeRegistration } from '../client-report-admission.js';
import { drainUpdateCommand, parseDrainRequest } from '../drain/node-drain-update.js';
import { nodeUpdateEvals } from '../node-evals.js';
import { ServerError } from '../server-error.js';
import type { NodeRegisterResult, NodeRegistrationAuth } from '../server-api.js';
import type { ClientIntroductionEndpoint } from './client-introduction-endpoint.js';
import type { EndpointContext } from './endpoint-context.js';

/**
 * Refuses a client call for `node` that does not carry the node's SecretID (as Nomad's clients
 * authenticate their Node.* RPCs with it): 403 "Permission denied".
 */
export function authenticateNode(node: Node, secretId: string): void {
  if (node.SecretID !== secretId) throw new ServerError('NODE_SECRET_MISMATCH', {});
}

export class NodeEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    private readonly introduction: ClientIntroductionEndpoint,
  ) {}

  /**
   * Registers a node. A registered node is re-registered only with its SecretID, whatever the
   * enforcement; a new one must pass client introduction (unless it is this agent's own
   * in-process client).
   */
  async registerNode(raw: unknown, auth: NodeRegistrationAuth = {}): Promise<NodeRegisterResult> {
    const { store } = this.ctx;
    const input = admitNodeRegistration(raw);
    const prev = store.nodeById(input.ID);
    if (prev && prev.SecretID && prev.SecretID !== input.SecretID) throw new ServerError('NODE_SECRET_MISMATCH', {});
    if (!prev && !auth.inProcess) this.introduction.admitNewNode({ ...input, NodePool: input.NodePool || 'default' }, auth.introToken);
    const node: Node = {
      ...input,
      Status: input.Status || 'ready',
      SchedulingEligibility: input.SchedulingEligibility || 'eligible',
      NodePool: input.NodePool || 'default',
      DrainStrategy: input.DrainStrategy ?? null,
    };
    const now = this.ctx.nowNanos();
    const transitioned = !prev || prev.Status !== node.Status;
    const evals = node.Status === 'ready' && transitioned ? nodeUpdateEvals(store, node.ID, store.latestIndex() + 1, now) : [];
    const index = await this.ctx.apply({ Type: 'NodeRegister', Node: node, Evals: evals, Now: now });
    // Another first registration of this ID may have been applied meanwhile: the FSM kept it.
    if (store.nodeById(node.ID)?.SecretID !== node.SecretID) throw new ServerError('NODE_SECRET_MISMATCH', {});
    const ttl = node.Status === 'down' ? 0 : this.ctx.resetHeartbeat(node.ID);
    return { heartbeatTtl: ttl * 1_000_000, index };
  }

  async heartbeatNode(nodeId: string, rawStatus: unknown, secretId: string): Promise<NodeRegisterResult> {
    const status = admitHeartbeatStatus(rawStatus);
    const node = this.ctx.store.nodeById(nodeId);
    if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    authenticateNode(node, secretId);
    let index = node.ModifyIndex;
    if (status && status !== node.Status) index = await this.setNodeStatus(nodeId, status, `Node heartbeat: status ${status}`);
    const ttl = status === 'down' ? 0 : this.ctx.resetHeartbeat(nodeId);
    if (status === 'down') this.ctx.clearHeartbeat(nodeId);
    return { heartbeatTtl: ttl * 1_000_000, index };
  }

  async updateNodeEligibility(nodeId: string, eligibility: NodeEligibility): Promise<{ index: number }> {
    const node = this.ctx.store.nodeById(nodeId);
    if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    if (eligibility !== 'eligible' && eligibility !== 'ineligible') {
      throw new ServerError('NODE_ELIGIBILITY_INVALID', { eligibility: String(eligibility) });
    }
    const index = await this.ctx.apply({ Type: 'NodeUpdateEligibility', NodeID: nodeId, Eligibility: eligibility, Evals: [], Now: this.ctx.nowNanos() });
    return { index };
  }

  /** Sets, replaces or cancels a node's drain (PUT /v1/node/:id/drain); the drainer does the rest. */
  async updateNodeDrain(nodeId: string, req: unknown): Promise<{ index: number; evalIds: string[] }> {
    const { store } = this.ctx;
    const node = store.nodeById(nodeId);
    if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    const parsed = parseDrainRequest(req);
    // A node made eligible again is worth scheduling on: evaluate what could use it.
    const eligibleAgain = !parsed.DrainSpec && parsed.MarkEligible && node.SchedulingEligibility !== 'eligible';
    const evals = eligibleAgain ? nodeUpdateEvals(store, nodeId, store.latestIndex() + 1, this.ctx.nowNanos()) : [];
    const index = await this.ctx.apply(drainUpdateCommand(node, parsed, this.ctx.clock.now(), evals));
    return { index, evalIds: evals.map((e) => e.ID) };
  }

  /** Creates node-update evaluations for a node's jobs (PUT /v1/node/:id/evaluate, Nomad's Node.Evaluate). */
  async evaluateNode(nodeId: string): Promise<{ evalIds: string[]; index: number }> {
    const { store } = this.ctx;
    const node = store.nodeById(nodeId);
    if (!node) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    const evals = nodeUpdateEvals(store, nodeId, node.ModifyIndex, this.ctx.nowNanos());
    if (evals.length === 0) return { evalIds: [], index: store.latestIndex() };
    const index = await this.ctx.apply({ Type: 'EvalUpdate', Evals: evals, Now: this.ctx.nowNanos() });
    return { evalIds: evals.map((e) => e.ID), index };
  }

  /**
   * Removes a node from the state (PUT /v1/node/:id/purge, Nomad's Node.Deregister) with
   * node-update evaluations for the jobs that had allocations there, which the scheduler then
   * treats as lost. A client still running comes back by registering again.
   */
  async purgeNode(nodeId: string): Promise<{ evalIds: string[]; index: number }> {
    const { store } = this.ctx;
    if (!store.nodeById(nodeId)) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    const now = this.ctx.nowNanos();
    const evals = nodeUpdateEvals(store, nodeId, store.latestIndex() + 1, now);
    const index = await this.ctx.apply({ Type: 'NodeDeregister', NodeIDs: [nodeId], Evals: evals, Now: now });
    this.ctx.clearHeartbeat(nodeId);
    return { evalIds: evals.map((e) => e.ID), index };
  }

  /** Marks a node down after a missed heartbeat; its allocations are handled by node-update evals. */
  async markMissedHeartbeat(nodeId: string): Promise<void> {
    const node = this.ctx.store.nodeById(nodeId);
    if (!node || node.Status === 'down') return;
    await this.setNodeStatus(nodeId, 'down', 'Node heartbeat missed');
  }

  private async setNodeStatus(nodeId: string, status: NodeStatus, message: string): Promise<number> {
    const { store } = this.ctx;
    const now = this.ctx.nowNanos();
    const evals = status === 'down' || status === 'ready' ? nodeUpdateEvals(store, nodeId, store.latestIndex() + 1, now) : [];
    return this.ctx.apply({
      Type: 'NodeUpdateStatus',
      NodeID: nodeId,
      Status: status,
      Event: {
        Message: message,
        Subsystem: 'Cluster',
        Details: null,
        Timestamp: new Date(this.ctx.clock.now()).toISOString(),
        CreateIndex: 0,
      },
      Evals: evals,
      Now: now,
    });
  }
}
