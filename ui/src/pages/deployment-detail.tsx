/** One deployment: its groups (desired, canaries, placed, healthy), actions, and its allocations with canaries marked. */
import { Fragment } from 'preact';
import type { StreamEvent } from '../../../src/server/events/event.js';
import type { AllocListStub } from '../../../src/structs/alloc.js';
import type { Deployment } from '../../../src/structs/deployment.js';
import { AllocTable } from '../components/alloc-table.js';
import { LiveView } from '../components/states.js';
import { dateTime, nsQuery, seg, shortId } from '../lib/format.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';
import { DeploymentCard } from './job-overview.js';

/** Events about one deployment: itself and the allocations it placed. */
function deploymentWatch(id: string): (ev: StreamEvent) => boolean {
  return (ev) => {
    const p = ev.Payload as { Deployment?: { ID: string }; Allocation?: { DeploymentID?: string } };
    return (ev.Topic === 'Deployment' && p.Deployment?.ID === id) || (ev.Topic === 'Allocation' && p.Allocation?.DeploymentID === id);
  };
}

export function DeploymentDetailPage({ id }: { id: string }) {
  const watch = deploymentWatch(id);
  const deployment = useLive<Deployment>(`/v1/deployment/${encodeURIComponent(id)}`, watch);
  const allocs = useLive<AllocListStub[]>(`/v1/deployment/allocations/${encodeURIComponent(id)}`, watch);
  return (
    <section aria-labelledby="deployment-title">
      <LiveView live={deployment} what="deployment">
        {(d) => (
          <>
            <p class="crumbs">
              <a href={href('/deployments')}>Deployments</a> / <a href={href(`/jobs/${seg(d.JobID)}${nsQuery(d.Namespace)}`)}>{d.JobID}</a>
            </p>
            <h1 id="deployment-title">
              Deployment <span class="mono">{shortId(d.ID)}</span>
            </h1>
            <dl class="facts">
              <dt>ID</dt>
              <dd class="mono">{d.ID}</dd>
              <dt>Job</dt>
              <dd>
                <a href={href(`/jobs/${seg(d.JobID)}${nsQuery(d.Namespace)}`)}>{d.JobID}</a> version {d.JobVersion}
              </dd>
              <dt>Status</dt>
              <dd>
                {d.Status}
                {d.StatusDescription && ` (${d.StatusDescription})`}
              </dd>
              {Object.entries(d.TaskGroups).map(([g, s]) => (
                <Fragment key={g}>
                  <dt>Progress deadline ({g})</dt>
                  <dd>{s.RequireProgressBy ? dateTime(Date.parse(s.RequireProgressBy) * 1e6) : '—'}</dd>
                </Fragment>
              ))}
            </dl>
            <h2>Groups</h2>
            <DeploymentCard d={d} />
          </>
        )}
      </LiveView>
      <h2>Allocations</h2>
      <LiveView live={allocs} what="allocations" empty={(a) => a.length === 0} emptyText="This deployment has placed no allocation.">
        {(a) => <AllocTable allocs={a} />}
      </LiveView>
    </section>
  );
}
