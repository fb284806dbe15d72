/**
 * The log command for an operator's drain request (PUT /v1/node/:id/drain), as Nomad's
 * Node.UpdateDrain builds it: a DrainSpec starts (or replaces) a drain — StartedAt now,
 * ForceDeadline now + Deadline, now for a negative Deadline ("force"), the zero time for none —
 * and null cancels it, optionally making the node eligible again (MarkEligible is ignored while
 * a drain is set, as Nomad's state store does). Also the command with
 * which the drainer completes a drain.
 */
import { CaravanError } from '../../structs/caravan-error.js';
import type { DrainStrategy, Evaluation, Node, NodeEvent } from '../../structs/index.js';
import type { NodeUpdateDrainCommand } from '../fsm/commands.js';
import { DrainStatus } from './drain-status.js';
import { GO_ZERO_TIME } from '../../structs/go-time.js';

/** What an operator asks for. */
export interface NodeDrainRequest {
  /** Null cancels the drain. */
  DrainSpec: { Deadline: number; IgnoreSystemJobs: boolean } | null;
  MarkEligible: boolean;
  Meta: Record<string, string> | null;
}

/** A drain request that cannot be applied; `field` names the offending input. */
export class DrainRequestError extends CaravanError<'NODE_DRAIN_INVALID'> {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super('NODE_DRAIN_INVALID', { field, reason });
    this.name = 'DrainRequestError';
  }
}

/** Validates a decoded JSON body into a NodeDrainRequest; throws DrainRequestError naming the field. */
export function parseDrainRequest(body: unknown): NodeDrainRequest {
  if (body === null || body === undefined) return { DrainSpec: null, MarkEligible: false, Meta: null };
  if (typeof body !== 'object' || Array.isArray(body)) throw new DrainRequestError('body', 'must be a JSON object');
  const b = body as Record<string, unknown>;
  let spec: NodeDrainRequest['DrainSpec'] = null;
  const rawSpec = b['DrainSpec'];
  if (rawSpec !== null && rawSpec !== undefined) {
    if (typeof rawSpec !== 'object' || Array.isArray(rawSpec)) throw new DrainRequestError('DrainSpec', 'must be an object or null');
    const s = rawSpec as Record<string, unknown>;
    const deadline = s['Deadline'] ?? 0;
    if (typeof deadline !== 'number' || !Number.isInteger(deadline)) throw new DrainRequestError('DrainSpec.Deadline', 'must be an integer number of nanoseconds');
    const ignore = s['IgnoreSystemJobs'] ?? false;
    if (typeof ignore !== 'boolean') throw new DrainRequestError('DrainSpec.IgnoreSystemJobs', 'must be a boolean');
    spec = { Deadline: deadline, IgnoreSystemJobs: ignore };
  }
  const mark = b['MarkEligible'] ?? false;
  if (typeof mark !== 'boolean') throw new DrainRequestError('MarkEligible', 'must be a boolean');
  // Nomad's CLI sends MarkEligible: true (unless -keep-ineligible) with every request, enabling
  // ones included; as in Nomad, a drain makes the node ineligible and MarkEligible only matters
  // when a drain is cancelled.
  const meta = b['Meta'] ?? null;
  if (meta !== null) {
    if (typeof meta !== 'object' || Array.isArray(meta)) throw new DrainRequestError('Meta', 'must be an object of strings');
    for (const [k, v] of Object.entries(meta)) if (typeof v !== 'string') throw new DrainRequestError(`Meta.${k}`, 'must be a string');
  }
  return { DrainSpec: spec, MarkEligible: mark, Meta: meta as Record<string, string> | null };
}

function drainEvent(message: string, nowMs: number, details: Record<string, string> | null = null): NodeEvent {
  return { Message: message, Subsystem: 'Drain', Details: details, Timestamp: new Date(nowMs).toISOString(), CreateIndex: 0 };
}

/** The command for `req` on `node` at `nowMs`; `evals` are those a re-eligible node triggers. */
export function drainUpdateCommand(node: Node, req: NodeDrainRequest, nowMs: number, evals: Evaluation[]): NodeUpdateDrainCommand {
  const now = new Date(nowMs).toISOString();
  let strategy: DrainStrategy | null = null;
  if (req.DrainSpec) {
    const d = req.DrainSpec.Deadline;
    strategy = {
      Deadline: d,
      IgnoreSystemJobs: req.DrainSpec.IgnoreSystemJobs,
      ForceDeadline: d < 0 ? now : d === 0 ? GO_ZERO_TIME : new Date(nowMs + Math.floor(d / 1e6)).toISOString(),
      StartedAt: now,
    };
  }
  const event = strategy
    ? drainEvent(node.DrainStrategy ? 'Node drain strategy updated' : 'Node drain strategy set', nowMs)
    : drainEvent('Node drain disabled', nowMs);
  return {
    Type: 'NodeUpdateDrain',
    NodeID: node.ID,
    DrainStrategy: strategy,
    MarkEligible: req.MarkEligible,
    Status: strategy ? DrainStatus.Draining : DrainStatus.Canceled,
    Meta: req.Meta,
    Event: event,
    Evals: evals,
    Now: nowMs * 1_000_000,
  };
}

/** The command with which the drainer ends a drain that has nothing left to move. */
export function drainCompleteCommand(nodeId: string, nowMs: number): NodeUpdateDrainCommand {
  return {
    Type: 'NodeUpdateDrain',
    NodeID: nodeId,
    DrainStrategy: null,
    MarkEligible: false,
    Status: DrainStatus.Complete,
    Meta: null,
    Event: drainEvent('Node drain complete', nowMs),
    Evals: [],
    Now: nowMs * 1_000_000,
  };
}
