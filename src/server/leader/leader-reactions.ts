/**
 * What the leader does after a command is applied: evaluations in the applied events feed the
 * eval broker or the blocked-evals tracker, freed capacity unblocks blocked evals, and changes
 * wake the leader duties that follow them (node drainer, deployment watcher, periodic dispatcher).
 * Runs on the leader only, after the FSM, in log order, for every entry (whoever proposed it).
 */
import { isTerminalClientStatus } from '../../structs/index.js';
import type { BlockedEvals } from '../broker/blocked-evals.js';
import type { EvalBroker } from '../broker/eval-broker.js';
import type { DeploymentWatcher } from '../deployment/deployment-watcher.js';
import type { NodeDrainer } from '../drain/node-drainer.js';
import type { StreamEvent } from '../events/event.js';
import type { Command } from '../fsm/commands.js';
import type { PeriodicDispatcher } from '../periodic/periodic-dispatcher.js';

/** The leader duties an applied command may wake (see leader-duties.ts). */
export interface ReactingDuties {
  broker: EvalBroker;
  blocked: BlockedEvals;
  drainer: NodeDrainer;
  deploymentWatcher: DeploymentWatcher;
  periodic: PeriodicDispatcher;
  /** The deployment an allocation belongs to ('' when none), from the latest state. */
  deploymentOfAlloc(allocId: string): string;
}

/** Reacts to one applied command at `index` that published `events`. */
export function reactToApply(cmd: Command, index: number, events: StreamEvent[], d: ReactingDuties): void {
  for (const ev of events) {
    if (!('Evaluation' in ev.Payload)) continue;
    const e = ev.Payload.Evaluation;
    if (e.Status === 'pending') d.broker.enqueue(e);
    else if (e.Status === 'blocked') d.blocked.block(e);
    else if (e.Status === 'complete' && !e.FailedTGAllocs) {
      const b = d.blocked.get(e.Namespace, e.JobID);
      if (b && b.ID !== e.ID && b.CreateIndex < e.CreateIndex) d.blocked.untrackJob(e.Namespace, e.JobID);
    }
  }
  switch (cmd.Type) {
    case 'NodeRegister':
      if (cmd.Node.Status === 'ready') d.blocked.unblock(index);
      break;
    case 'NodeUpdateStatus':
      if (cmd.Status === 'ready') d.blocked.unblock(index);
      break;
    case 'NodeUpdateEligibility':
      if (cmd.Eligibility === 'eligible') d.blocked.unblock(index);
      break;
    case 'NodeUpdateDrain':
      if (cmd.DrainStrategy) d.drainer.poke();
      else if (cmd.MarkEligible) d.blocked.unblock(index);
      break;
    case 'AllocClientUpdate':
      if (cmd.Allocs.some((a) => isTerminalClientStatus(a.ClientStatus))) d.blocked.unblock(index);
      if (cmd.Allocs.some((a) => a.DeploymentStatus)) {
        d.deploymentWatcher.poke(cmd.Allocs.map((a) => d.deploymentOfAlloc(a.ID)));
      }
      break;
    case 'ApplyPlanResults':
      if (cmd.AllocsStopped.length > 0) d.blocked.unblock(index);
      if (cmd.Deployment || cmd.DeploymentUpdates.length > 0) {
        d.deploymentWatcher.poke([cmd.Deployment?.ID ?? '', ...cmd.DeploymentUpdates.map((u) => u.DeploymentID)]);
      }
      break;
    case 'DeploymentStatusUpdate':
      d.deploymentWatcher.poke([cmd.Update.DeploymentID]);
      break;
    case 'DeploymentPromote':
    case 'DeploymentAllocHealth':
      d.deploymentWatcher.poke([cmd.DeploymentID]);
      break;
    case 'JobDeregister':
      d.blocked.untrackJob(cmd.Namespace, cmd.JobID);
      d.periodic.jobChanged(cmd.Namespace, cmd.JobID);
      break;
    case 'JobRegister':
      d.periodic.jobChanged(cmd.Job.Namespace, cmd.Job.ID);
      break;
    case 'EvalUpdate':
    case 'EvalDelete':
    case 'NodeDeregister':
    case 'AllocUpdateDesiredTransition':
    case 'DeploymentUpsert':
    case 'JobStability':
    case 'JobSummaryReconcile':
    case 'SchedulerConfigSet':
    case 'AutopilotConfigSet':
    case 'ScalingEventRecord':
    case 'NamespaceUpsert':
    case 'NamespaceDelete':
    case 'AclBootstrap':
    case 'AclTokenUpsert':
    case 'AclTokenDelete':
    case 'AclPolicyUpsert':
    case 'AclPolicyDelete':
    case 'AclRoleUpsert':
    case 'AclRoleDelete':
    case 'AclIntroductionKeySet':
    case 'RootKeyUpsert':
    case 'RootKeyDelete':
    case 'JobVersionTag':
    case 'NodePoolUpsert':
    case 'NodePoolDelete':
    case 'VariableSet':
    case 'VariableDelete':
    case 'VariableLock':
    case 'ServiceRegistrationUpsert':
    case 'ServiceRegistrationDelete':
    case 'HostVolumeUpsert':
    case 'HostVolumeDelete':
      // (A volume becomes usable when its node registers with it: NodeRegister unblocks then.)
      break;
    case 'SnapshotRestore':
      // The server stops the duties before a restore and builds them again from the restored
      // state (server.ts restoreSnapshot): there is nothing of the old ones to react with.
      break;
    default: {
      const never: never = cmd;
      void never;
    }
  }
}
