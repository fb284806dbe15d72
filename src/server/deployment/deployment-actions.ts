/**
 * Users' actions on a deployment turned into log commands, with Nomad's checks and messages:
 * only an active deployment can be promoted, failed, paused or resumed; promotion needs every
 * promoted group's canaries healthy; manual health needs the allocations to be in the deployment.
 */
import { isOperableDeployment, isTerminalDeploymentStatus } from '../../structs/deployment.js';
import type { Deployment, DeploymentState, Evaluation, Job } from '../../structs/index.js';
import type { Command } from '../fsm/commands.js';
import { ServerError } from '../server-error.js';
import type { DeploymentAction } from '../server-api.js';
import { lastStableVersion } from './deployment-watcher.js';

/** What the server reads to check an action. */
export interface ActionState {
  deploymentById(id: string): Deployment | undefined;
  jobById(namespace: string, id: string): Job | undefined;
  jobVersions(namespace: string, id: string): Job[];
  allocById(id: string): { ID: string; DeploymentID: string; DeploymentStatus: { Healthy: boolean | null } | null } | undefined;
}

/** The command of an action, its evaluation, and a job version to re-register (auto-revert). */
export interface ActionPlan {
  command: Command;
  evaluation: Evaluation | null;
  revertTo: Job | null;
}

function invalid(message: string): ServerError {
  return new ServerError('DEPLOYMENT_INVALID', { reason: message });
}

function canaryGroupsReady(groups: [string, DeploymentState][], healthyOf: (id: string) => boolean): void {
  for (const [name, s] of groups) {
    const healthy = (s.PlacedCanaries ?? []).filter(healthyOf).length;
    if (healthy < s.DesiredCanaries) {
      throw invalid(`Task group "${name}" has ${healthy}/${s.DesiredCanaries} healthy allocations`);
    }
  }
}

/**
 * Checks an unblock (Nomad's Deployment.Unblock): the deployment must exist and not be terminal.
 * Unblocking is for a multiregion deployment waiting on its peer regions; Nomad CE does nothing
 * beyond this check (its deployment watcher's UnblockDeployment is a no-op) and answers success,
 * and Caravan, with one region, does the same: there is no command to apply.
 */
export function checkUnblock(state: Pick<ActionState, 'deploymentById'>, deploymentId: string): void {
  const d = state.deploymentById(deploymentId);
  if (!d) throw new ServerError('DEPLOYMENT_NOT_FOUND', { deployment: deploymentId });
  if (isTerminalDeploymentStatus(d.Status)) throw invalid("can't unblock terminal deployment");
}

/**
 * Checks an action against the deployment and builds its command. `newEval` makes the
 * evaluation that lets the scheduler act on the change. Unblock has no command (checkUnblock).
 */
export function planDeploymentAction(
  state: ActionState,
  deploymentId: string,
  action: Exclude<DeploymentAction, { Type: 'unblock' }>,
  nowNanos: number,
  newEval: (job: Job, deploymentId: string) => Evaluation,
): ActionPlan {
  const d = state.deploymentById(deploymentId);
  if (!d) throw new ServerError('DEPLOYMENT_NOT_FOUND', { deployment: deploymentId });
  const job = state.jobById(d.Namespace, d.JobID);
  if (!job) throw new ServerError('JOB_NOT_FOUND', { job: d.JobID });
  const active = isOperableDeployment(d);
  if (!active) throw invalid(`can't ${action.Type === 'alloc-health' ? 'set health of allocations of' : action.Type} terminal deployment`);
  const evaluation = newEval(job, d.ID);
  switch (action.Type) {
    case 'promote': {
      const canaryGroups = Object.entries(d.TaskGroups).filter(([, s]) => s.DesiredCanaries > 0 && !s.Promoted);
      let chosen = canaryGroups;
      if (!action.All) {
        for (const g of action.Groups) if (!d.TaskGroups[g]) throw invalid(`Groups: deployment has no task group "${g}"`);
        chosen = canaryGroups.filter(([name]) => action.Groups.includes(name));
      }
      if (chosen.length === 0) throw invalid('no canaries to promote');
      canaryGroupsReady(chosen, (id) => state.allocById(id)?.DeploymentStatus?.Healthy === true);
      return {
        command: { Type: 'DeploymentPromote', DeploymentID: d.ID, Groups: chosen.map(([n]) => n), Eval: evaluation, Now: nowNanos },
        evaluation,
        revertTo: null,
      };
    }
    case 'fail': {
      let description = 'Deployment marked as failed';
      let revertTo: Job | null = null;
      if (Object.values(d.TaskGroups).some((s) => s.AutoRevert)) {
        revertTo = lastStableVersion(state.jobVersions(d.Namespace, d.JobID), d.JobVersion) ?? null;
        description += revertTo ? ` - rolling back to job version ${revertTo.Version}` : ' - no stable job version to auto revert to';
      }
      return {
        command: { Type: 'DeploymentStatusUpdate', Update: { DeploymentID: d.ID, Status: 'failed', StatusDescription: description }, Eval: evaluation, Now: nowNanos },
        evaluation,
        revertTo: revertTo && job.Version === d.JobVersion ? revertTo : null,
      };
    }
    case 'pause': {
      const update = action.Pause
        ? { DeploymentID: d.ID, Status: 'paused' as const, StatusDescription: 'Deployment is paused' }
        : { DeploymentID: d.ID, Status: 'running' as const, StatusDescription: 'Deployment is running' };
      // Resuming lets the scheduler continue; pausing needs no evaluation.
      const e = action.Pause ? null : evaluation;
      return { command: { Type: 'DeploymentStatusUpdate', Update: update, Eval: e, Now: nowNanos }, evaluation: e, revertTo: null };
    }
    case 'alloc-health': {
      const ids = [...action.HealthyAllocationIDs, ...action.UnhealthyAllocationIDs];
      if (ids.length === 0) throw invalid('HealthyAllocationIDs: must specify at least one healthy or unhealthy allocation');
      for (const id of ids) {
        if (state.allocById(id)?.DeploymentID !== d.ID) throw invalid(`Allocation "${id}" is not part of deployment`);
      }
      return {
        command: {
          Type: 'DeploymentAllocHealth',
          DeploymentID: d.ID,
          HealthyAllocationIDs: action.HealthyAllocationIDs,
          UnhealthyAllocationIDs: action.UnhealthyAllocationIDs,
          Eval: evaluation,
          Now: nowNanos,
        },
        evaluation,
        revertTo: null,
      };
    }
    default: {
      const never: never = action;
      throw invalid(`unknown action ${(never as { Type: string }).Type}`);
    }
  }
}
