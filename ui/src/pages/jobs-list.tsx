/** The jobs list: every job with its status and allocation counts, live; filter by text, type and status. */
import { useState } from 'preact/hooks';
import type { JobListStub } from '../../../src/structs/job.js';
import { StatusBadge, SummaryBar, totalSummary } from '../components/summary-bar.js';
import { LiveView } from '../components/states.js';
import { getNamespace, withQuery } from '../lib/api.js';
import { ago, nanosToMs, nsQuery, seg } from '../lib/format.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';
import { fuzzyMatch } from '../lib/fuzzy.js';
import { useDenied } from '../lib/session.js';

export function JobsListPage() {
  const live = useLive<JobListStub[]>(withQuery('/v1/jobs', { namespace: getNamespace() }), ['Job', 'Allocation', 'Evaluation']);
  const [text, setText] = useState('');
  const [type, setType] = useState('');
  const [status, setStatus] = useState('');
  const ns = getNamespace();
  const canRun = useDenied()(ns === '*' ? 'default' : ns, 'submit-job') === undefined;
  return (
    <section aria-labelledby="jobs-title">
      <div class="page-head">
        <h1 id="jobs-title">Jobs</h1>
        {canRun && (
          <a class="button primary" href={href('/run')}>
            Run job
          </a>
        )}
      </div>
      <div class="filters" role="search">
        <label>
          <span class="sr-only">Filter jobs</span>
          <input type="search" placeholder="Filter by name…" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <label>
          Type{' '}
          <select value={type} onChange={(e) => setType(e.currentTarget.value)}>
            <option value="">all</option>
            {['service', 'batch', 'system', 'sysbatch'].map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
        <label>
          Status{' '}
          <select value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
            <option value="">all</option>
            {['pending', 'running', 'dead'].map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        </label>
      </div>
      <LiveView live={live} what="jobs" empty={(d) => d.length === 0} emptyText="No jobs yet. Run one with “Run job” or caravan job run.">
        {(jobs) => {
          const shown = jobs
            .filter((j) => (!type || j.Type === type) && (!status || j.Status === status) && (!text || fuzzyMatch(text, j.Name)))
            .sort((a, b) => b.SubmitTime - a.SubmitTime);
          if (shown.length === 0) return <p class="state empty">No job matches the filter.</p>;
          return (
            <table class="list" aria-label="Jobs">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col" class="hide-narrow">Namespace</th>
                  <th scope="col">Type</th>
                  <th scope="col">Status</th>
                  <th scope="col" class="hide-narrow">Priority</th>
                  <th scope="col">Allocations</th>
                  <th scope="col" class="hide-narrow">Submitted</th>
                </tr>
              </thead>
              <tbody>
                {shown.map((j) => (
                  <tr key={`${j.Namespace}/${j.ID}`} data-testid="job-row" data-job={j.ID}>
                    <td>
                      <a href={href(`/jobs/${seg(j.ID)}${nsQuery(j.Namespace)}`)}>{j.Name}</a>
                      {j.ParentID && <span class="muted"> (child of {j.ParentID})</span>}
                    </td>
                    <td class="hide-narrow">{j.Namespace}</td>
                    <td>{j.Type}</td>
                    <td>
                      <StatusBadge status={j.Stop && j.Status !== 'dead' ? 'stopping' : j.Status} />
                    </td>
                    <td class="hide-narrow">{j.Priority}</td>
                    <td>
                      <SummaryBar counts={totalSummary(j.JobSummary)} />
                    </td>
                    <td class="hide-narrow">{ago(nanosToMs(j.SubmitTime))}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          );
        }}
      </LiveView>
    </section>
  );
}
