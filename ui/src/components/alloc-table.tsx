/**
 * A table of allocations (job, client, deployment pages), newest first; canaries are marked.
 * In a narrow window it scrolls sideways inside itself rather than dropping columns (only a
 * phone-sized one hides the least useful ones).
 */
import type { AllocListStub } from '../../../src/structs/alloc.js';
import { ago, dateTime, nanosToMs, nsQuery, seg, shortId } from '../lib/format.js';
import { href } from '../lib/router.js';
import { StatusBadge } from './summary-bar.js';

export function AllocTable({ allocs, showJob = false, showNode = true }: { allocs: AllocListStub[]; showJob?: boolean; showNode?: boolean }) {
  // Newest first: by the index that created it, then its creation time, then its name.
  const sorted = [...allocs].sort((a, b) => b.CreateIndex - a.CreateIndex || b.CreateTime - a.CreateTime || a.Name.localeCompare(b.Name));
  return (
    <div class="table-scroll">
    <table class="list alloc-table" aria-label="Allocations">
      <thead>
        <tr>
          <th scope="col">ID</th>
          <th scope="col">Name</th>
          {showJob && <th scope="col">Job</th>}
          {showNode && <th scope="col">Client</th>}
          <th scope="col">Status</th>
          <th scope="col">Desired</th>
          <th scope="col">Version</th>
          <th scope="col" class="hide-phone">Created</th>
          <th scope="col" class="hide-phone">Modified</th>
        </tr>
      </thead>
      <tbody>
        {sorted.map((a) => (
          <tr key={a.ID} data-testid="alloc-row" data-alloc={a.ID}>
            <td>
              <a class="mono" href={href(`/allocations/${a.ID}`)}>
                {shortId(a.ID)}
              </a>
            </td>
            <td>
              {a.Name}
              {a.DeploymentStatus?.Canary && (
                <>
                  {' '}
                  <span class="badge badge-canary" data-testid="canary">
                    canary
                  </span>
                </>
              )}
            </td>
            {showJob && (
              <td>
                <a href={href(`/jobs/${seg(a.JobID)}${nsQuery(a.Namespace)}`)}>{a.JobID}</a>
              </td>
            )}
            {showNode && (
              <td>
                <a href={href(`/clients/${a.NodeID}`)}>{a.NodeName || shortId(a.NodeID)}</a>
              </td>
            )}
            <td>
              <StatusBadge status={a.ClientStatus} />
            </td>
            <td>{a.DesiredStatus}</td>
            <td>{a.JobVersion}</td>
            <td class="hide-phone" title={dateTime(a.CreateTime)}>
              {ago(nanosToMs(a.CreateTime))}
            </td>
            <td class="hide-phone">{ago(nanosToMs(a.ModifyTime))}</td>
          </tr>
        ))}
      </tbody>
    </table>
    </div>
  );
}
