/** An allocation: status, actions, task states with event timelines, ports, services with their checks, and CPU/memory charts. */
import { useState } from 'preact/hooks';
import type { StreamEvent } from '../../../src/server/events/event.js';
import type { Allocation, TaskState } from '../../../src/structs/alloc.js';
import { isUnsetTime } from '../../../src/structs/go-time.js';
import type { AllocResourceUsage } from '../../../src/http/routes/client-alloc.js';
import { ActionButton } from '../components/action-button.js';
import { LineChart } from '../components/chart.js';
import { AllocServices, allocHasServices } from '../components/services-alloc.js';
import { ErrorBox, LiveView } from '../components/states.js';
import { StatusBadge } from '../components/summary-bar.js';
import { apiWrite } from '../lib/api.js';
import { bytes, dateTime, nanosToMs, nsQuery, seg, shortId } from '../lib/format.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';
import { usePoll } from '../lib/use-poll.js';
import { useCan, useDenied } from '../lib/session.js';

const SIGNALS = ['SIGHUP', 'SIGINT', 'SIGTERM', 'SIGUSR1', 'SIGUSR2', 'SIGKILL'];

/** Events about one allocation. */
export function allocWatch(id: string): (ev: StreamEvent) => boolean {
  return (ev) => ev.Topic === 'Allocation' && (ev.Payload as { Allocation: Allocation }).Allocation.ID === id;
}

/** An allocation that has stopped for good (complete, failed, lost) or is being stopped. */
export function allocIsTerminal(alloc: Pick<Allocation, 'ClientStatus' | 'DesiredStatus'>): boolean {
  return ['complete', 'failed', 'lost'].includes(alloc.ClientStatus) || alloc.DesiredStatus !== 'run';
}

/** Restart, stop and signals: offered only while the allocation may still run, as Nomad's UI. */
function AllocActions({ alloc }: { alloc: Allocation }) {
  const tasks = Object.keys(alloc.TaskStates ?? {});
  const [signal, setSignal] = useState('SIGHUP');
  const [task, setTask] = useState('');
  const deniedBy = useDenied()(alloc.Namespace, 'alloc-lifecycle');
  if (allocIsTerminal(alloc)) return null;
  const running = alloc.ClientStatus === 'running';
  return (
    <div class="actions" aria-label="Allocation actions">
      <ActionButton label="Restart" disabled={!running} deniedBy={deniedBy} confirm="Yes, restart" run={() => apiWrite('POST', `/v1/client/allocation/${alloc.ID}/restart`, {})} />
      <ActionButton label="Stop" danger deniedBy={deniedBy} confirm="Yes, stop allocation" run={() => apiWrite('POST', `/v1/allocation/${alloc.ID}/stop`, {})} />
      <label>
        <span class="sr-only">Signal</span>
        <select value={signal} onChange={(e) => setSignal(e.currentTarget.value)} aria-label="Signal">
          {SIGNALS.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
      </label>
      <label>
        <span class="sr-only">Task to signal</span>
        <select value={task} onChange={(e) => setTask(e.currentTarget.value)} aria-label="Task to signal">
          <option value="">all tasks</option>
          {tasks.map((t) => (
            <option key={t}>{t}</option>
          ))}
        </select>
      </label>
      <ActionButton label="Send signal" disabled={!running} deniedBy={deniedBy} run={() => apiWrite('POST', `/v1/client/allocation/${alloc.ID}/signal`, { Signal: signal, ...(task ? { Task: task } : {}) })} />
    </div>
  );
}

/** The exec capability a task needs: raw_exec runs outside any isolation, so Nomad asks for alloc-node-exec. */
export function execCapability(alloc: Allocation, task: string): string {
  const driver = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Tasks.find((t) => t.Name === task)?.Driver;
  return driver === 'raw_exec' ? 'alloc-node-exec' : 'alloc-exec';
}

function TaskCard({ alloc, name, state }: { alloc: Allocation; name: string; state: TaskState }) {
  const base = `/allocations/${alloc.ID}/${seg(name)}`;
  const events = [...(state.Events ?? [])].reverse();
  const can = useCan();
  const ns = alloc.Namespace;
  return (
    <div class="card task-card" data-testid="task-state" data-task={name}>
      <h3>
        {name} <StatusBadge status={state.Failed ? 'failed' : state.State} />
      </h3>
      <p class="muted">
        Restarts: {state.Restarts}. Started {!isUnsetTime(state.StartedAt) ? new Date(state.StartedAt!).toLocaleString() : '—'}
        {!isUnsetTime(state.FinishedAt) ? `, finished ${new Date(state.FinishedAt!).toLocaleString()}` : ''}.
      </p>
      <div class="task-links">
        {can('read-logs', ns) && <a href={href(`${base}/logs`)}>Logs</a>}
        {state.State === 'running' && !allocIsTerminal(alloc) && can(execCapability(alloc, name), ns) && <a href={href(`${base}/exec`)}>Exec</a>}
        {can('read-fs', ns) && <a href={href(`/allocations/${alloc.ID}/fs?path=${encodeURIComponent('/' + name)}`)}>Files</a>}
      </div>
      <h4 class="sr-only">Events</h4>
      <table class="events" aria-label={`Events of task ${name}`} data-testid="task-events">
        <tbody>
          {events.map((e, i) => (
            <tr key={i}>
              <td class="muted when">{dateTime(e.Time)}</td>
              <th scope="row">{e.Type}</th>
              <td>{e.DisplayMessage}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

/** What the allocation's tasks were given: CPU in MHz, memory in bytes (the max when oversubscribed). */
function reserved(alloc: Allocation): { cpuMhz: number; memoryBytes: number } {
  let cpuMhz = 0;
  let memoryMb = 0;
  for (const t of Object.values(alloc.AllocatedResources?.Tasks ?? {})) {
    cpuMhz += t.Cpu?.CpuShares ?? 0;
    memoryMb += Math.max(t.Memory?.MemoryMB ?? 0, t.Memory?.MemoryMaxMB ?? 0);
  }
  return { cpuMhz, memoryBytes: memoryMb * 1024 * 1024 };
}

/** CPU in MHz used (Nomad's TotalTicks) and RSS, each against what the tasks reserved. */
function AllocStats({ alloc }: { alloc: Allocation }) {
  const { samples, error } = usePoll<AllocResourceUsage>(`/v1/client/allocation/${alloc.ID}/stats`, 2000, 60);
  const r = reserved(alloc);
  return (
    <>
      {error && <ErrorBox error={error} />}
      <div class="charts" data-testid="alloc-stats">
        <LineChart label="CPU" values={samples.map((s) => s.ResourceUsage.CpuStats.TotalTicks)} format={(v) => `${v < 10 ? v.toFixed(1) : Math.round(v)} MHz`} limit={r.cpuMhz || undefined} />
        <LineChart label="Memory (RSS)" values={samples.map((s) => s.ResourceUsage.MemoryStats.RSS)} format={bytes} limit={r.memoryBytes || undefined} />
      </div>
    </>
  );
}

function Ports({ alloc }: { alloc: Allocation }) {
  const shared = alloc.AllocatedResources?.Shared;
  const ports = [
    ...(shared?.Ports ?? []).map((p) => ({ label: p.Label, value: p.Value, to: p.To, ip: p.HostIP })),
    ...(shared?.Networks ?? []).flatMap((n) => [...(n.ReservedPorts ?? []), ...(n.DynamicPorts ?? [])].map((p) => ({ label: p.Label, value: p.Value, to: p.To, ip: n.IP }))),
  ];
  const seen = new Set<string>();
  const unique = ports.filter((p) => !seen.has(p.label) && seen.add(p.label));
  if (unique.length === 0) return <p class="muted">No ports.</p>;
  return (
    <table class="list" aria-label="Ports">
      <thead>
        <tr>
          <th scope="col">Label</th>
          <th scope="col">Address</th>
          <th scope="col">To</th>
        </tr>
      </thead>
      <tbody>
        {unique.map((p) => (
          <tr key={p.label}>
            <td>{p.label}</td>
            <td class="mono">
              {p.ip}:{p.value}
            </td>
            <td>{p.to || '—'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function AllocDetailPage({ id }: { id: string }) {
  const live = useLive<Allocation>(`/v1/allocation/${encodeURIComponent(id)}`, allocWatch(id));
  return (
    <section aria-labelledby="alloc-title">
      <LiveView live={live} what="allocation">
        {(a) => (
          <>
            <p class="crumbs">
              <a href={href('/jobs')}>Jobs</a> / <a href={href(`/jobs/${seg(a.JobID)}${nsQuery(a.Namespace)}`)}>{a.JobID}</a> / {a.TaskGroup}
            </p>
            <div class="page-head">
              <h1 id="alloc-title">
                Allocation <span class="mono">{shortId(a.ID)}</span>
              </h1>
              <StatusBadge status={a.ClientStatus} />
              {a.DeploymentStatus?.Canary && <StatusBadge status="canary" />}
              <AllocActions alloc={a} />
            </div>
            <dl class="facts">
              <dt>Name</dt>
              <dd>{a.Name}</dd>
              <dt>ID</dt>
              <dd class="mono">{a.ID}</dd>
              <dt>Client</dt>
              <dd>
                <a href={href(`/clients/${a.NodeID}`)}>{a.NodeName || shortId(a.NodeID)}</a>
              </dd>
              <dt>Desired</dt>
              <dd>
                {a.DesiredStatus}
                {a.DesiredDescription && ` (${a.DesiredDescription})`}
              </dd>
              <dt>Client status</dt>
              <dd>
                {a.ClientStatus}
                {a.ClientDescription && ` (${a.ClientDescription})`}
              </dd>
              {a.DeploymentID && (
                <>
                  <dt>Deployment</dt>
                  <dd>
                    <a class="mono" href={href(`/deployments/${a.DeploymentID}`)}>
                      {shortId(a.DeploymentID)}
                    </a>
                    {a.DeploymentStatus?.Canary && ' (canary)'}
                    {a.DeploymentStatus?.Healthy != null && ` · ${a.DeploymentStatus.Healthy ? 'healthy' : 'unhealthy'}`}
                  </dd>
                </>
              )}
              <dt>Created</dt>
              <dd>{new Date(nanosToMs(a.CreateTime)).toLocaleString()}</dd>
              {a.PreviousAllocation && (
                <>
                  <dt>Replaces</dt>
                  <dd>
                    <a class="mono" href={href(`/allocations/${a.PreviousAllocation}`)}>
                      {shortId(a.PreviousAllocation)}
                    </a>
                  </dd>
                </>
              )}
              {a.NextAllocation && (
                <>
                  <dt>Replaced by</dt>
                  <dd>
                    <a class="mono" href={href(`/allocations/${a.NextAllocation}`)}>
                      {shortId(a.NextAllocation)}
                    </a>
                  </dd>
                </>
              )}
            </dl>
            {a.ClientStatus === 'running' && (
              <>
                <h2>Resource use</h2>
                <AllocStats alloc={a} />
              </>
            )}
            <h2>Tasks</h2>
            <div class="task-cards">
              {Object.entries(a.TaskStates ?? {}).map(([name, st]) => (
                <TaskCard key={name} alloc={a} name={name} state={st} />
              ))}
            </div>
            {Object.keys(a.TaskStates ?? {}).length === 0 && <p class="state empty">No task has started yet.</p>}
            <h2>Ports</h2>
            <Ports alloc={a} />
            {allocHasServices(a) && (
              <>
                <h2>Services</h2>
                <AllocServices alloc={a} />
              </>
            )}
          </>
        )}
      </LiveView>
    </section>
  );
}
