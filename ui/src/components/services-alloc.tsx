/**
 * An allocation's services: its registrations (`/v1/allocation/:id/services`, following the
 * `Service` topic for this allocation) and the latest result of each check from the client
 * running them (`/v1/client/allocation/:id/checks`). Check results have no change event, so
 * they are sampled every 2 s while the allocation runs, as the resource stats are.
 */
import type { CheckQueryResult } from '../../../src/client/serviceregistration/alloc-check-runner.js';
import type { Allocation } from '../../../src/structs/alloc.js';
import type { ServiceRegistration } from '../../../src/structs/service-registration.js';
import { ago } from '../lib/format.js';
import { allocServiceWatch } from '../lib/service-watch.js';
import { useLive } from '../lib/use-live.js';
import { usePoll } from '../lib/use-poll.js';
import { ErrorBox, LiveView } from './states.js';
import { hostPort, ServiceTags } from './services-job.js';
import { StatusBadge } from './summary-bar.js';

const CHECK_POLL_MS = 2000;

/** The word shown for a check status: Nomad's `success`/`failure` read as passing/failing. */
export function checkLabel(status: string): string {
  return status === 'success' ? 'passing' : status === 'failure' ? 'failing' : status;
}

/**
 * The checks of one registration. A result names its service, group and task, and the
 * registration's ID names its owner (`…-<task or group-<group>>-<service>-…`), so two tasks
 * registering the same service name keep their own checks.
 */
export function checksOf(reg: ServiceRegistration, checks: CheckQueryResult[]): CheckQueryResult[] {
  return checks.filter((c) => c.Service === reg.ServiceName && reg.ID.includes(`-${c.Task ?? `group-${c.Group}`}-${c.Service}-`));
}

/** True when the allocation declares any service (group or task), whatever its provider. */
export function allocHasServices(alloc: Allocation): boolean {
  const group = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup);
  return !!group && ((group.Services?.length ?? 0) > 0 || group.Tasks.some((t) => (t.Services?.length ?? 0) > 0));
}

function ChecksTable({ checks }: { checks: CheckQueryResult[] }) {
  const sorted = [...checks].sort((a, b) => a.Service.localeCompare(b.Service) || a.Check.localeCompare(b.Check));
  return (
    <div class="table-scroll">
      <table class="list" aria-label="Checks" data-testid="alloc-checks">
        <thead>
          <tr>
            <th scope="col">Check</th>
            <th scope="col">Service</th>
            <th scope="col">Task</th>
            <th scope="col">Status</th>
            <th scope="col">Output</th>
            <th scope="col">Last checked</th>
          </tr>
        </thead>
        <tbody>
          {sorted.map((c) => (
            <tr key={c.ID} data-testid="check-row" data-check={c.Check} data-status={c.Status}>
              <td>{c.Check}</td>
              <td>{c.Service}</td>
              <td>{c.Task ?? <span class="muted">(group)</span>}</td>
              <td>
                <StatusBadge status={checkLabel(c.Status)} />
              </td>
              <td class="mono check-output" title={c.Output}>
                {c.StatusCode ? `HTTP ${c.StatusCode}: ` : ''}
                {c.Output || '—'}
              </td>
              <td title={new Date(c.Timestamp * 1000).toLocaleString()}>{ago(c.Timestamp * 1000)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function AllocServices({ alloc }: { alloc: Allocation }) {
  const live = useLive<ServiceRegistration[]>(`/v1/allocation/${encodeURIComponent(alloc.ID)}/services`, allocServiceWatch(alloc.ID));
  // Only a running allocation's client has results; a stopped one's are gone with its services.
  const { samples, error } = usePoll<Record<string, CheckQueryResult>>(alloc.ClientStatus === 'running' ? `/v1/client/allocation/${alloc.ID}/checks` : undefined, CHECK_POLL_MS, 1);
  const checks = Object.values(samples[samples.length - 1] ?? {});
  return (
    <div data-testid="alloc-services">
      <LiveView live={live} what="services" empty={(s) => s.length === 0} emptyText="No service of this allocation is registered.">
        {(regs) => (
          <div class="table-scroll">
            <table class="list" aria-label="Services">
              <thead>
                <tr>
                  <th scope="col">Service</th>
                  <th scope="col">Tags</th>
                  <th scope="col">Address</th>
                  <th scope="col">Checks</th>
                </tr>
              </thead>
              <tbody>
                {[...regs]
                  .sort((a, b) => a.ServiceName.localeCompare(b.ServiceName) || a.ID.localeCompare(b.ID))
                  .map((s) => {
                    const mine = checksOf(s, checks);
                    const passing = mine.filter((c) => c.Status === 'success').length;
                    return (
                      <tr key={s.ID} data-testid="service-row" data-service={s.ServiceName}>
                        <td>{s.ServiceName}</td>
                        <td>
                          <ServiceTags tags={s.Tags} />
                        </td>
                        <td class="mono">{hostPort(s.Address, s.Port)}</td>
                        <td>{mine.length === 0 ? <span class="muted">—</span> : `${passing}/${mine.length} passing`}</td>
                      </tr>
                    );
                  })}
              </tbody>
            </table>
          </div>
        )}
      </LiveView>
      {error && <ErrorBox error={error} />}
      {checks.length > 0 && (
        <>
          <h3>Checks</h3>
          <ChecksTable checks={checks} />
        </>
      )}
    </div>
  );
}
