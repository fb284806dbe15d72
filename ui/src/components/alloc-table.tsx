/** A table of allocations (job, client and evaluation pages). */
import type { AllocListStub } from '../../../src/structs/alloc.js';
import { ago, nanosToMs, nsQuery, seg, shortId } from '../lib/format.js';
import { href } from '../lib/router.js';
import { StatusBadge } from './summary-bar.js';

export function AllocTable({ allocs, showJob = false, showNode = true }: { allocs: AllocListStub[]; showJob?: boolean; showNode?: boolean }) {
  const sorted = [...allocs].sort((a, b) => b.CreateIndex - a.CreateIndex);
  return (
    <table class="list" aria-label="Allocations">
      <thead>
        <tr>
          <th scope="col">ID</th>
          <th scope="col">Name</th>
          {showJob && <th scope="col">Job</th>}
          {showNode && <th scope="col">Client</th>}
          <th scope="col">Status</th>
          <th scope="col" class="hide-narrow">Desired</th>
          <th scope="col" class="hide-narrow">Version</th>
          <th scope="col" class="hide-narrow">Modified</th>
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
            <td>{a.Name}</td>
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
            <td class="hide-narrow">{a.DesiredStatus}</td>
            <td class="hide-narrow">{a.JobVersion}</td>
            <td class="hide-narrow">{ago(nanosToMs(a.ModifyTime))}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
