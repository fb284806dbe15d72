/**
 * A cheap shape check of a command before it is appended to the log: the lists the FSM
 * iterates are lists of objects with IDs, the objects it reads are objects. It catches the
 * malformed commands that would make the FSM throw on every replay; the FSM's own rollback
 * (StateStore.transact) covers whatever slips through.
 */
import { CaravanError } from '../../structs/caravan-error.js';
import { CommandType, type Command } from './commands.js';
import { aclCommandProblem, isAclCommand } from './acl-commands.js';

/** Raised for a command that must not reach the log; `field` names what is wrong. */
export class CommandInvalidError extends CaravanError<'COMMAND_INVALID'> {
  constructor(readonly field: string, reason: string) {
    super('COMMAND_INVALID', { field, reason });
    this.name = 'CommandInvalidError';
  }
}

/** Lists of objects that each need a string ID. */
const ID_LISTS = ['Evals', 'AllocsUpdated', 'AllocsStopped'] as const;
/** Lists of strings. */
const STRING_LISTS = ['EvalIDs', 'AllocIDs', 'NodeIDs', 'HealthyAllocationIDs', 'UnhealthyAllocationIDs'] as const;
/** Single objects that need a string ID when present (null allowed). */
const ID_OBJECTS = ['Job', 'Eval', 'Node', 'Deployment'] as const;

/** Throws CommandInvalidError when cmd is not shaped as its Type requires. */
export function checkCommand(cmd: Command): void {
  const known: readonly string[] = Object.values(CommandType);
  if (!isObject(cmd) || !known.includes(cmd.Type)) {
    throw new CommandInvalidError('Type', `unknown command type "${String((cmd as { Type?: unknown } | null)?.Type)}"`);
  }
  const rec = cmd as unknown as Record<string, unknown>;
  if ('Now' in rec && typeof rec.Now !== 'number') throw new CommandInvalidError('Now', 'must be a number');
  for (const f of ID_LISTS) {
    if (!(f in rec)) continue;
    const list = rec[f];
    if (!Array.isArray(list)) throw new CommandInvalidError(f, 'must be a list');
    list.forEach((x, i) => {
      if (!isObject(x) || typeof x.ID !== 'string') throw new CommandInvalidError(`${f}[${i}].ID`, 'is required');
    });
  }
  for (const f of STRING_LISTS) {
    if (!(f in rec) || (rec[f] === null && f !== 'EvalIDs' && f !== 'AllocIDs' && f !== 'NodeIDs')) continue;
    const list = rec[f];
    if (!Array.isArray(list) || !list.every((x) => typeof x === 'string')) throw new CommandInvalidError(f, 'must be a list of IDs');
  }
  for (const f of ID_OBJECTS) {
    if (!(f in rec) || rec[f] === null) continue;
    const o = rec[f];
    if (!isObject(o) || typeof o.ID !== 'string') throw new CommandInvalidError(`${f}.ID`, 'is required');
  }
  if (isAclCommand(cmd)) {
    const bad = aclCommandProblem(cmd);
    if (bad) throw new CommandInvalidError(bad, 'is malformed');
    return;
  }
  switch (cmd.Type) {
    case 'JobRegister':
      if (!Array.isArray(cmd.Job?.TaskGroups)) throw new CommandInvalidError('Job.TaskGroups', 'must be a list');
      break;
    case 'AllocClientUpdate':
      if (!Array.isArray(cmd.Allocs)) throw new CommandInvalidError('Allocs', 'must be a list');
      cmd.Allocs.forEach((a, i) => {
        if (!isObject(a) || typeof a.ID !== 'string') throw new CommandInvalidError(`Allocs[${i}].ID`, 'is required');
      });
      break;
    case 'AllocUpdateDesiredTransition':
      if (!isObject(cmd.Allocs)) throw new CommandInvalidError('Allocs', 'must be an object');
      break;
    case 'NodePoolUpsert':
      if (!Array.isArray(cmd.Pools)) throw new CommandInvalidError('Pools', 'must be a list');
      cmd.Pools.forEach((p, i) => {
        if (!isObject(p) || typeof p.Name !== 'string') throw new CommandInvalidError(`Pools[${i}].Name`, 'is required');
      });
      break;
    case 'NodePoolDelete':
      if (!Array.isArray(cmd.Names) || !cmd.Names.every((n) => typeof n === 'string')) throw new CommandInvalidError('Names', 'must be a list of names');
      break;
    case 'VariableSet':
      if (!isObject(cmd.Variable) || typeof cmd.Variable.Path !== 'string' || typeof cmd.Variable.Namespace !== 'string') {
        throw new CommandInvalidError('Variable', 'must name its Namespace and Path');
      }
      if (!isObject(cmd.Variable.Items)) throw new CommandInvalidError('Variable.Items', 'must be an object');
      break;
    case 'VariableDelete':
      if (typeof cmd.Namespace !== 'string' || typeof cmd.Path !== 'string') throw new CommandInvalidError('Path', 'must name a namespace and path');
      break;
    case 'VariableLock':
      if (cmd.Op === 'acquire') {
        if (!isObject(cmd.Variable) || typeof cmd.Variable.Path !== 'string' || typeof cmd.Variable.Namespace !== 'string') {
          throw new CommandInvalidError('Variable', 'must name its Namespace and Path');
        }
        if (!isObject(cmd.Lock) || typeof cmd.Lock.ID !== 'string' || cmd.Lock.ID === '') throw new CommandInvalidError('Lock.ID', 'is required');
      } else if (cmd.Op === 'release') {
        if (typeof cmd.Namespace !== 'string' || typeof cmd.Path !== 'string' || typeof cmd.LockID !== 'string') throw new CommandInvalidError('LockID', 'must name a namespace, path and lock');
      } else {
        throw new CommandInvalidError('Op', 'must be "acquire" or "release"');
      }
      break;
    case 'DeploymentStatusUpdate':
      if (!isObject(cmd.Update)) throw new CommandInvalidError('Update', 'must be an object');
      break;
    case 'HostVolumeUpsert':
      if (!Array.isArray(cmd.Volumes)) throw new CommandInvalidError('Volumes', 'must be a list');
      cmd.Volumes.forEach((v, i) => {
        if (!isObject(v) || typeof v.ID !== 'string' || typeof v.Name !== 'string' || typeof v.NodeID !== 'string' || typeof v.Namespace !== 'string') {
          throw new CommandInvalidError(`Volumes[${i}]`, 'must name its ID, Name, NodeID and Namespace');
        }
      });
      break;
    case 'HostVolumeDelete':
      if (!Array.isArray(cmd.IDs) || !cmd.IDs.every((x) => typeof x === 'string')) throw new CommandInvalidError('IDs', 'must be a list of volume IDs');
      break;
    case 'NamespaceUpsert':
      if (!Array.isArray(cmd.Namespaces)) throw new CommandInvalidError('Namespaces', 'must be a list');
      cmd.Namespaces.forEach((n, i) => {
        if (!isObject(n) || typeof n.Name !== 'string') throw new CommandInvalidError(`Namespaces[${i}].Name`, 'is required');
      });
      break;
    case 'NamespaceDelete':
      if (!Array.isArray(cmd.Names) || !cmd.Names.every((n) => typeof n === 'string')) throw new CommandInvalidError('Names', 'must be a list of names');
      break;
    case 'ServiceRegistrationUpsert':
      if (!Array.isArray(cmd.Services)) throw new CommandInvalidError('Services', 'must be a list');
      cmd.Services.forEach((r, i) => {
        if (!isObject(r) || typeof r.ID !== 'string' || typeof r.AllocID !== 'string' || typeof r.ServiceName !== 'string' || typeof r.Namespace !== 'string') {
          throw new CommandInvalidError(`Services[${i}]`, 'must name its ID, AllocID, ServiceName and Namespace');
        }
      });
      break;
    case 'ServiceRegistrationDelete':
      if (!Array.isArray(cmd.IDs) || !cmd.IDs.every((x) => typeof x === 'string')) throw new CommandInvalidError('IDs', 'must be a list of IDs');
      break;
    case 'SnapshotRestore':
      if (typeof cmd.Snapshot !== 'string' || cmd.Snapshot === '') throw new CommandInvalidError('Snapshot', 'must be the snapshot file, base64');
      break;
    default:
      break;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
