/** A job's overview: task groups with counts and scaling, the latest deployment, recent allocations. */
import { useState } from 'preact/hooks';
import type { AllocListStub } from '../../../src/structs/alloc.js';
import type { Deployment } from '../../../src/structs/deployment.js';
import type { Evaluation } from '../../../src/structs/eval.js';
import type { Job, JobSummary, TaskGroup } from '../../../src/structs/job.js';
import { PlacementFailures } from '../components/placement-failure.js';
import { ActionButton } from '../components/action-button.js';
import { AllocTable } from '../components/alloc-table.js';
import { LiveView } from '../components/states.js';
import { StatusBadge, SummaryBar } from '../components/summary-bar.js';
import { apiWrite } from '../lib/api.js';
import { dateTime, nsQuery, seg, shortId } from '../lib/format.js';
import { allocationTotal, jobPath, jobWatch } from '../lib/job-api.js';
import { useLive } from '../lib/use-live.js';
import { href } from '../lib/router.js';
import { useDenied } from '../lib/session.js';

/** The overview's allocation rows, and the largest job (by its groups' counts) whose whole list it reads to find the newest. */
const RECENT_ROWS = 10;
const RECENT_SCAN_LIMIT = 500;

function ScaleControl({ job, group }: { job: Job; group: TaskGroup }) {
  const [count, setCount] = useState(group.Count);
  // Nomad's scale endpoint takes scale-job or submit-job.
  const deniedBy = useDenied()(job.Namespace, 'scale-job', 'submit-job');
  return (
    <form class="actions" onSubmit={(e) => e.preventDefault()}>
      <label>
        Count{' '}
        <input
          type="number"
          min={0}
          value={count}
          disabled={deniedBy !== undefined}
          style={{ width: '5em' }}
          aria-label={`Count of group ${group.Name}`}
          onInput={(e) => setCount(Number(e.currentTarget.value))}
        />
      </label>
      <ActionButton
        label="Scale"
        deniedBy={deniedBy}
        disabled={count === group.Count || !Number.isInteger(count) || count < 0}
        run={() => apiWrite('PUT', jobPath(job.ID, job.Namespace, 'scale'), { Count: count, Target: { Job: job.ID, Group: group.Name }, Message: 'scaled from the web UI' })}
      />
    </form>
  );
}

export function DeploymentCard({ d }: { d: Deployment }) {
  const canPromote = d.Status === 'running' && Object.values(d.TaskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted);
  const deniedBy = useDenied()(d.Namespace, 'submit-job');
  return (
    <div class="card" data-testid="deployment">
      <h3>
        Deployment{' '}
        <a class="mono" href={href(`/deployments/${d.ID}`)}>
          {shortId(d.ID)}
        </a>{' '}
        <StatusBadge status={d.Status} />
      </h3>
      <p class="muted">
        Version {d.JobVersion}. {d.StatusDescription}
      </p>
      <table class="list">
        <thead>
          <tr>
            <th scope="col">Group</th>
            <th scope="col">Desired</th>
            <th scope="col">Canaries</th>
            <th scope="col">Placed</th>
            <th scope="col">Healthy</th>
            <th scope="col">Unhealthy</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(d.TaskGroups).map(([name, g]) => (
            <tr key={name}>
              <td>{name}</td>
              <td>{g.DesiredTotal}</td>
              <td>
                {g.PlacedCanaries?.length ?? 0}/{g.DesiredCanaries}
                {g.DesiredCanaries > 0 && (g.Promoted ? ' (promoted)' : '')}
              </td>
              <td>{g.PlacedAllocs}</td>
              <td>{g.HealthyAllocs}</td>
              <td>{g.UnhealthyAllocs}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {d.Status === 'running' && (
        <div class="actions" style={{ marginTop: '8px' }}>
          {canPromote && <ActionButton label="Promote" primary deniedBy={deniedBy} run={() => apiWrite('PUT', `/v1/deployment/promote/${d.ID}`, { DeploymentID: d.ID, All: true })} />}
          <ActionButton label="Fail deployment" danger deniedBy={deniedBy} confirm="Yes, fail it" run={() => apiWrite('PUT', `/v1/deployment/fail/${d.ID}`, { DeploymentID: d.ID })} />
        </div>
      )}
    </div>
  );
}

export function JobOverview({ job }: { job: Job }) {
  const watch = jobWatch(job.ID, job.Namespace);
  const summary = useLive<JobSummary>(jobPath(job.ID, job.Namespace, 'summary'), watch);
  const deployment = useLive<Deployment | null>(job.Type === 'service' ? jobPath(job.ID, job.Namespace, 'deployment') : undefined, watch);
  // The newest allocations need the whole list (the API pages by ID, not by age), re-read on
  // every change of any of them: only a job that asks for few enough is listed here; a large one
  // shows its total and points to the Allocations tab, which reads a page at a time.
  const small = job.TaskGroups.reduce((n, g) => n + g.Count, 0) <= RECENT_SCAN_LIMIT;
  const allocs = useLive<AllocListStub[]>(small ? jobPath(job.ID, job.Namespace, 'allocations') : undefined, watch);
  const total = summary.data ? allocationTotal(summary.data) : undefined;
  const evals = useLive<Evaluation[]>(jobPath(job.ID, job.Namespace, 'evaluations'), watch);
  const queued = Object.values(summary.data?.Summary ?? {}).reduce((n, g) => n + g.Queued, 0);
  // While allocations wait to be placed, the latest evaluation that failed to place says why.
  const failed = queued > 0 ? [...(evals.data ?? [])].sort((a, b) => b.CreateIndex - a.CreateIndex).find((e) => e.FailedTGAllocs && Object.keys(e.FailedTGAllocs).length > 0) : undefined;
  return (
    <>
      <dl class="facts">
        <dt>Namespace</dt>
        <dd>{job.Namespace}</dd>
        <dt>Datacenters</dt>
        <dd>{job.Datacenters.join(', ')}</dd>
        <dt>Submitted</dt>
        <dd>{dateTime(job.SubmitTime)}</dd>
        {job.ParentID && (
          <>
            <dt>Parent</dt>
            <dd>{job.ParentID}</dd>
          </>
        )}
      </dl>
      {failed?.FailedTGAllocs && (
        <>
          <h2>Placement failures</h2>
          <PlacementFailures failed={failed.FailedTGAllocs} />
        </>
      )}
      <h2>Task groups</h2>
      <div class="cards">
        {job.TaskGroups.map((g) => {
          const counts = summary.data?.Summary[g.Name];
          return (
            <div class="card" key={g.Name} data-testid="task-group">
              <h3>{g.Name}</h3>
              {counts && <SummaryBar counts={counts} />}
              <p class="muted">
                Tasks: {g.Tasks.map((t) => `${t.Name} (${t.Driver})`).join(', ')}
              </p>
              {!job.Stop && !job.ParameterizedJob && !job.Periodic && job.Type !== 'system' && job.Type !== 'sysbatch' && <ScaleControl job={job} group={g} />}
            </div>
          );
        })}
      </div>
      {job.Type === 'service' && (
        <>
          <h2>Latest deployment</h2>
          <LiveView live={deployment} what="deployment" empty={(d) => d === null} emptyText="No deployment for this job.">
            {(d) => d && <DeploymentCard d={d} />}
          </LiveView>
        </>
      )}
      {small ? (
        <>
          <h2>Recent allocations</h2>
          <LiveView live={allocs} what="allocations" empty={(a) => a.length === 0}>
            {(a) => <AllocTable allocs={[...a].sort((x, y) => y.CreateIndex - x.CreateIndex).slice(0, RECENT_ROWS)} />}
          </LiveView>
        </>
      ) : (
        <>
          <h2>Allocations</h2>
          <p data-testid="alloc-total">
            {total === undefined ? 'Counting allocations…' : `${total.toLocaleString('en-US')} allocations: `}
            <a href={href(`/jobs/${seg(job.ID)}/allocations${nsQuery(job.Namespace)}`)}>see them a page at a time</a>.
          </p>
        </>
      )}
    </>
  );
}
