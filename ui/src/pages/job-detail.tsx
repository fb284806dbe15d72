/** A job: header with actions, and tabs for overview, allocations, services, versions, deployments, evaluations, definition. */
import type { AllocListStub } from '../../../src/structs/alloc.js';
import type { Job, JobSummary } from '../../../src/structs/job.js';
import { PAGE_SIZE, Pager, usePager } from '../components/pager.js';
import { withQuery } from '../lib/api.js';
import { ActionButton } from '../components/action-button.js';
import { AllocTable } from '../components/alloc-table.js';
import { JobServices } from '../components/services-job.js';
import { LiveView } from '../components/states.js';
import { StatusBadge } from '../components/summary-bar.js';
import { nsQuery, seg } from '../lib/format.js';
import { allocationTotal, jobPath, jobWatch, restartJob, stopJob, updateJob } from '../lib/job-api.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';
import { DispatchForm } from './job-dispatch.js';
import { JobDeployments, JobEvaluations, JobVersions } from './job-history.js';
import { JobOverview } from './job-overview.js';
import { useDenied } from '../lib/session.js';

const TABS: Array<[string, string]> = [
  ['', 'Overview'],
  ['allocations', 'Allocations'],
  ['services', 'Services'],
  ['versions', 'Versions'],
  ['deployments', 'Deployments'],
  ['evaluations', 'Evaluations'],
  ['definition', 'Definition'],
];

function JobActions({ job }: { job: Job }) {
  const ns = job.Namespace;
  const denied = useDenied();
  return (
    <div class="actions" aria-label="Job actions">
      {job.Stop ? (
        <ActionButton label="Start" primary deniedBy={denied(ns, 'submit-job')} run={() => updateJob(job.ID, ns, (j) => (j.Stop = false))} />
      ) : (
        <>
          <ActionButton label="Restart" deniedBy={denied(ns, 'alloc-lifecycle')} confirm="Restart all running allocations?" run={() => restartJob(job.ID, ns)} />
          <ActionButton label="Stop" danger deniedBy={denied(ns, 'submit-job')} confirm="Yes, stop job" run={() => stopJob(job.ID, ns)} />
        </>
      )}
      {job.Stop && <ActionButton label="Purge" danger deniedBy={denied(ns, 'submit-job')} confirm="Yes, purge job" run={() => stopJob(job.ID, ns, true)} />}
    </div>
  );
}

export function JobDetailPage({ id, ns, tab }: { id: string; ns: string; tab: string }) {
  const watch = jobWatch(id, ns);
  const job = useLive<Job>(jobPath(id, ns), watch);
  const base = `/jobs/${seg(id)}`;
  return (
    <section aria-labelledby="job-title">
      <p class="crumbs">
        <a href={href('/jobs')}>Jobs</a> / {ns}
      </p>
      <div class="page-head">
        <h1 id="job-title">{id}</h1>
        {job.data && (
          <>
            <StatusBadge status={job.data.Stop && job.data.Status !== 'dead' ? 'stopping' : job.data.Status} />
            <span class="muted">
              {job.data.Type} · priority {job.data.Priority} · version {job.data.Version}
            </span>
            <JobActions job={job.data} />
          </>
        )}
      </div>
      <nav class="tabs" aria-label="Job sections">
        {TABS.map(([t, label]) => (
          <a key={t} href={href(`${base}${t ? '/' + t : ''}${nsQuery(ns)}`)} aria-current={tab === t ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {/* The allocations need only the job's ID: read at once, beside the job, not after it. */}
      {tab === 'allocations' && !(job.error && !job.data) && <JobAllocations id={id} ns={ns} />}
      <LiveView live={job} what="job">
        {(j) => (
          <>
            {tab === '' && <JobOverview job={j} />}
            {tab === '' && j.ParameterizedJob && !j.Stop && <DispatchForm job={j} />}
            {tab === 'services' && <JobServices id={id} ns={ns} />}
            {tab === 'versions' && <JobVersions id={id} ns={ns} />}
            {tab === 'deployments' && <JobDeployments id={id} ns={ns} />}
            {tab === 'evaluations' && <JobEvaluations id={id} ns={ns} />}
            {tab === 'definition' && (
              <pre class="code" aria-label="Job definition">
                {JSON.stringify(j, null, 2)}
              </pre>
            )}
          </>
        )}
      </LiveView>
    </section>
  );
}

export function JobAllocations({ id, ns }: { id: string; ns: string }) {
  // A page at a time: a job may have 50,000 allocations; the total is the summary's.
  const watch = jobWatch(id, ns);
  const pager = usePager(`${ns}/${id}`);
  const allocs = useLive<AllocListStub[]>(withQuery(jobPath(id, ns, 'allocations'), { per_page: PAGE_SIZE, next_token: pager.token || undefined }), watch);
  const summary = useLive<JobSummary>(jobPath(id, ns, 'summary'), watch);
  return (
    <LiveView live={allocs} what="allocations" empty={(a) => a.length === 0 && pager.page === 1}>
      {(a) => (
        <>
          <Pager pager={pager} rows={a.length} nextToken={allocs.nextToken} total={summary.data && allocationTotal(summary.data)} what="allocations" />
          <AllocTable allocs={a} />
        </>
      )}
    </LiveView>
  );
}
