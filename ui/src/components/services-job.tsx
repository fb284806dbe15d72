/**
 * A job's Services tab: every registered instance of its `provider = "nomad"` services
 * (`/v1/job/:id/services`) with tags, address, allocation and client, as Nomad's UI lists
 * them. It follows the `Service` event topic for this job only, so an instance shows when its
 * task starts and goes when its allocation stops, without a reload.
 */
import type { ServiceRegistration } from '../../../src/structs/service-registration.js';
import { shortId } from '../lib/format.js';
import { jobPath } from '../lib/job-api.js';
import { href } from '../lib/router.js';
import { jobServiceWatch } from '../lib/service-watch.js';
import { useLive } from '../lib/use-live.js';
import { LiveView } from './states.js';

/** `host:port`, with an IPv6 host in brackets so the port stays readable. */
export function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

export function ServiceTags({ tags }: { tags: string[] | null }) {
  if (!tags?.length) return <span class="muted">—</span>;
  return (
    <span class="service-tags">
      {tags.map((t) => (
        <span key={t} class="tag">
          {t}
        </span>
      ))}
    </span>
  );
}

export function JobServices({ id, ns }: { id: string; ns: string }) {
  const live = useLive<ServiceRegistration[]>(jobPath(id, ns, 'services'), jobServiceWatch(id, ns));
  return (
    <LiveView live={live} what="services" empty={(s) => s.length === 0} emptyText={'No service of this job is registered (provider = "nomad" services appear while their tasks run).'}>
      {(regs) => {
        // Grouped by service name, then by allocation, so a service's instances read together.
        const sorted = [...regs].sort((a, b) => a.ServiceName.localeCompare(b.ServiceName) || a.AllocID.localeCompare(b.AllocID) || a.ID.localeCompare(b.ID));
        return (
          <div class="table-scroll">
            <table class="list" aria-label="Services" data-testid="job-services">
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Address</th>
                  <th scope="col">Allocation</th>
                  <th scope="col">Client</th>
                </tr>
              </thead>
              <tbody>
                {sorted.map((s) => (
                  <tr key={s.ID} data-testid="service-row" data-service={s.ServiceName} data-alloc={s.AllocID}>
                    <td>{s.ServiceName}</td>
                    <td>
                      <ServiceTags tags={s.Tags} />
                    </td>
                    <td class="mono">{hostPort(s.Address, s.Port)}</td>
                    <td>
                      <a class="mono" href={href(`/allocations/${s.AllocID}`)}>
                        {shortId(s.AllocID)}
                      </a>
                    </td>
                    <td>
                      <a class="mono" href={href(`/clients/${s.NodeID}`)}>
                        {shortId(s.NodeID)}
                      </a>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        );
      }}
    </LiveView>
  );
}
