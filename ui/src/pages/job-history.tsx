/** A job's versions (diffs, revert), deployments and evaluations. */
import type { Deployment } from '../../../src/structs/deployment.js';
import type { Evaluation } from '../../../src/structs/eval.js';
import type { Job } from '../../../src/structs/job.js';
import { ActionButton } from '../components/action-button.js';
import { PlacementFailures } from '../components/placement-failure.js';
import { LiveView } from '../components/states.js';
import { StatusBadge } from '../components/summary-bar.js';
import { diffChangesSomething, JobDiffView } from '../components/job-diff-view.js';
import type { JobDiff } from '../../../src/structs/job-diff/diff-types.js';
import { ago, dateTime, nanosToMs, shortId } from '../lib/format.js';
import { apiWrite, withQuery } from '../lib/api.js';
import { jobPath, jobWatch } from '../lib/job-api.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';
import { useDenied } from '../lib/session.js';

export function JobVersions({ id, ns }: { id: string; ns: string }) {
  // Nomad's field diffs come with the versions: Diffs[i] is Versions[i] against the next older one.
  const versions = useLive<{ Versions: Job[]; Diffs: JobDiff[] | null }>(withQuery(jobPath(id, ns, 'versions'), { diffs: true }), jobWatch(id, ns));
  const denied = useDenied();
  return (
    <LiveView live={versions} what="versions">
      {({ Versions, Diffs }) => {
        // The API answers newest first; Diffs line up with Versions by position.
        const withDiffs = Versions.map((v, i) => ({ v, diff: Diffs?.[i] })).sort((a, b) => b.v.Version - a.v.Version);
        return (
          <ul class="versions">
            {withDiffs.map(({ v, diff }, i) => {
              const prev = withDiffs[i + 1]?.v;
              return (
                <li key={v.Version} class="card" data-testid="version" data-version={v.Version}>
                  <h3>
                    Version {v.Version} {v.Stable && <StatusBadge status="stable" />} {v.VersionTag?.Name && <StatusBadge status={`tag: ${v.VersionTag.Name}`} />}{' '}
                    {i === 0 && <span class="muted">(current)</span>}
                  </h3>
                  <p class="muted">Submitted {dateTime(v.SubmitTime)}</p>
                  {prev && diff && (diffChangesSomething(diff) ? (
                    <details open={i === 0}>
                      <summary>Changes from version {prev.Version}</summary>
                      <JobDiffView diff={diff} />
                    </details>
                  ) : (
                    <p class="muted">No changes to the specification from version {prev.Version}.</p>
                  ))}
                  {i > 0 && (
                    <ActionButton
                      label={`Revert to version ${v.Version}`}
                      deniedBy={denied(ns, 'submit-job')}
                      confirm={`Yes, revert to ${v.Version}`}
                      run={() => apiWrite('PUT', jobPath(id, ns, 'revert'), { JobID: id, JobVersion: v.Version, EnforcePriorVersion: withDiffs[0]!.v.Version })}
                    />
                  )}
                </li>
              );
            })}
          </ul>
        );
      }}
    </LiveView>
  );
}

export function JobDeployments({ id, ns }: { id: string; ns: string }) {
  const deployments = useLive<Deployment[]>(jobPath(id, ns, 'deployments'), jobWatch(id, ns));
  return (
    <LiveView live={deployments} what="deployments" empty={(d) => d.length === 0}>
      {(ds) => <DeploymentTable deployments={ds} />}
    </LiveView>
  );
}

export function DeploymentTable({ deployments, showJob = false }: { deployments: Deployment[]; showJob?: boolean }) {
  return (
    <table class="list" aria-label="Deployments">
      <thead>
        <tr>
          <th scope="col">ID</th>
          {showJob && <th scope="col">Job</th>}
          <th scope="col">Version</th>
          <th scope="col">Status</th>
          <th scope="col">Groups (healthy/desired)</th>
          <th scope="col" class="hide-narrow">Description</th>
        </tr>
      </thead>
      <tbody>
        {[...deployments]
          .sort((a, b) => b.CreateIndex - a.CreateIndex)
          .map((d) => (
            <tr key={d.ID} data-testid="deployment-row">
              <td>
                <a class="mono" href={href(`/deployments/${d.ID}`)}>
                  {shortId(d.ID)}
                </a>
              </td>
              {showJob && (
                <td>
                  <a href={href(`/jobs/${encodeURIComponent(d.JobID)}${d.Namespace !== 'default' ? `?namespace=${d.Namespace}` : ''}`)}>{d.JobID}</a>
                </td>
              )}
              <td>{d.JobVersion}</td>
              <td>
                <StatusBadge status={d.Status} />
              </td>
              <td>
                {Object.entries(d.TaskGroups)
                  .map(([g, s]) => `${g}: ${s.HealthyAllocs}/${s.DesiredTotal}`)
                  .join(', ')}
              </td>
              <td class="hide-narrow">{d.StatusDescription}</td>
            </tr>
          ))}
      </tbody>
    </table>
  );
}

export function JobEvaluations({ id, ns }: { id: string; ns: string }) {
  const evals = useLive<Evaluation[]>(jobPath(id, ns, 'evaluations'), jobWatch(id, ns));
  return (
    <LiveView live={evals} what="evaluations" empty={(e) => e.length === 0}>
      {(es) => <EvalTable evals={es} />}
    </LiveView>
  );
}

export function EvalTable({ evals, showJob = false }: { evals: Evaluation[]; showJob?: boolean }) {
  const sorted = [...evals].sort((a, b) => b.CreateIndex - a.CreateIndex);
  return (
    <table class="list" aria-label="Evaluations">
      <thead>
        <tr>
          <th scope="col">ID</th>
          {showJob && <th scope="col">Job</th>}
          <th scope="col">Triggered by</th>
          <th scope="col">Status</th>
          <th scope="col">Placement</th>
          <th scope="col" class="hide-narrow">Created</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((e) => (
          <tr key={e.ID} data-testid="eval-row">
            <td class="mono">{shortId(e.ID)}</td>
            {showJob && <td>{e.JobID}</td>}
            <td>{e.TriggeredBy}</td>
            <td>
              <StatusBadge status={e.Status} /> {e.StatusDescription && <span class="muted">{e.StatusDescription}</span>}
            </td>
            <td>
              {e.FailedTGAllocs && Object.keys(e.FailedTGAllocs).length > 0 ? (
                <PlacementFailures failed={e.FailedTGAllocs} />
              ) : (
                <span class="muted">{e.Status === 'blocked' ? 'waiting for a node with room' : e.Status === 'pending' ? 'not scheduled yet' : 'ok'}</span>
              )}
            </td>
            <td class="hide-narrow">{ago(nanosToMs(e.CreateTime))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
