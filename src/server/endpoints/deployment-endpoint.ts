/** The deployment endpoint: promote, fail, pause/resume, and allocation health set by hand. */
import { checkUnblock, planDeploymentAction } from '../deployment/deployment-actions.js';
import { newEvaluation } from '../new-eval.js';
import type { DeploymentAction } from '../server-api.js';
import type { EndpointContext } from './endpoint-context.js';
import type { JobEndpoint } from './job-endpoint.js';

export class DeploymentEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    private readonly jobs: JobEndpoint,
  ) {}

  /** Promotes, fails, pauses/resumes a deployment or sets its allocations' health. */
  async deploymentAction(deploymentId: string, action: DeploymentAction): Promise<{ evalId: string; index: number }> {
    if (action.Type === 'unblock') {
      // Nomad CE answers an unblock of a live deployment with an empty success, changing nothing.
      checkUnblock(this.ctx.store, deploymentId);
      return { evalId: '', index: 0 };
    }
    const now = this.ctx.nowNanos();
    const plan = planDeploymentAction(this.ctx.store, deploymentId, action, now, (job, id) =>
      newEvaluation(job, 'deployment-watcher', now, { DeploymentID: id }),
    );
    const index = await this.ctx.apply(plan.command);
    if (plan.revertTo) await this.jobs.autoRevert(plan.revertTo);
    return { evalId: plan.evaluation?.ID ?? '', index };
  }
}
