/**
 * Topology: the cluster's CPU and memory summed overall and per datacenter, then the clients a
 * page at a time, each with its capacity and the allocations packed on it, live. The sums and
 * each client's usage come from the server (/v1/ui/topology): with 10,000 clients and 50,000
 * allocations the browser never reads either list whole.
 */
import type { AllocListStub } from '../../../src/structs/alloc.js';
import type { NodeReservedResources, NodeResources, AllocatedResources } from '../../../src/structs/resources.js';
import type { ClusterUsage, NodeUsage, UsageAmount } from '../../../src/http/api-views/node-usage-views.js';
import { PAGE_SIZE, Pager, usePager } from '../components/pager.js';
import { LiveView } from '../components/states.js';
import { withQuery } from '../lib/api.js';
import { StatusBadge } from '../components/summary-bar.js';
import { shortId } from '../lib/format.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';

interface Placed {
  ID: string;
  Name: string;
  JobID: string;
  ClientStatus: string;
  DesiredStatus: string;
  NodeID: string;
  AllocatedResources: AllocatedResources | null;
}

/** CPU (MHz) and memory (MB) an allocation holds. */
export function allocUsage(a: Placed): { cpu: number; mem: number } {
  let cpu = 0;
  let mem = 0;
  for (const t of Object.values(a.AllocatedResources?.Tasks ?? {})) {
    cpu += t.Cpu?.CpuShares ?? 0;
    mem += t.Memory?.MemoryMB ?? 0;
  }
  return { cpu, mem };
}

/** Allocations that hold resources on their node. */
function holding(a: Placed): boolean {
  return a.DesiredStatus === 'run' && (a.ClientStatus === 'running' || a.ClientStatus === 'pending');
}

function capacity(res: NodeResources | undefined, reserved: NodeReservedResources | null | undefined): { cpu: number; mem: number } {
  return {
    cpu: (res?.Cpu.CpuShares ?? 0) - (reserved?.Cpu.CpuShares ?? 0),
    mem: (res?.Memory.MemoryMB ?? 0) - (reserved?.Memory.MemoryMB ?? 0),
  };
}

function Meter({ label, used, total, unit }: { label: string; used: number; total: number; unit: string }) {
  const pct = total > 0 ? Math.min(100, (used / total) * 100) : 0;
  return (
    <div>
      <div class="muted" style={{ fontSize: '12px' }}>
        {label}: {used.toLocaleString()} / {total.toLocaleString()} {unit} ({pct.toFixed(0)}%)
      </div>
      <div class="meter" role="meter" aria-label={label} aria-valuemin={0} aria-valuemax={total} aria-valuenow={used}>
        <span style={{ width: `${pct}%` }} />
      </div>
    </div>
  );
}

/** CPU and memory meters of one node. */
export function UsageMeters({ node, allocs }: { node: { NodeResources?: NodeResources; ReservedResources?: NodeReservedResources | null }; allocs: Placed[] }) {
  const cap = capacity(node.NodeResources, node.ReservedResources);
  const used = allocs.filter(holding).reduce((s, a) => {
    const u = allocUsage(a);
    return { cpu: s.cpu + u.cpu, mem: s.mem + u.mem };
  }, { cpu: 0, mem: 0 });
  return (
    <>
      <Meter label="CPU" used={used.cpu} total={cap.cpu} unit="MHz" />
      <Meter label="Memory" used={used.mem} total={cap.mem} unit="MB" />
    </>
  );
}

/** The allocations a page of clients holds are listed by name only up to this many. */
const MAX_LISTED_ALLOCS = 500;

function UsageAmountMeters({ cpu, mem }: { cpu: UsageAmount; mem: UsageAmount }) {
  return (
    <>
      <Meter label="CPU" used={cpu.Allocated} total={cpu.Capacity} unit="MHz" />
      <Meter label="Memory" used={mem.Allocated} total={mem.Capacity} unit="MB" />
    </>
  );
}

function statusText(statuses: Record<string, number>): string {
  return Object.keys(statuses)
    .sort()
    .map((s) => `${statuses[s]!.toLocaleString('en-US')} ${s}`)
    .join(', ');
}

function ClusterSummary({ c }: { c: ClusterUsage }) {
  return (
    <>
      <div class="cards" data-testid="topo-summary">
        <div class="card">
          <h3>Clients</h3>
          <p>
            <strong data-testid="topo-node-total">{c.Nodes.toLocaleString('en-US')}</strong> clients: {statusText(c.Statuses)}
            {c.Ineligible > 0 && `; ${c.Ineligible.toLocaleString('en-US')} ineligible`}
            {c.Draining > 0 && `; ${c.Draining.toLocaleString('en-US')} draining`}
          </p>
          <p>
            <strong data-testid="topo-alloc-total">{c.Allocations.toLocaleString('en-US')}</strong> live allocations
          </p>
        </div>
        <div class="card">
          <h3>Cluster resources</h3>
          <UsageAmountMeters cpu={c.Cpu} mem={c.Memory} />
        </div>
      </div>
      <h2>Datacenters</h2>
      <div class="table-scroll">
        <table class="list" aria-label="Datacenters">
          <thead>
            <tr>
              <th scope="col">Datacenter</th>
              <th scope="col">Clients</th>
              <th scope="col">Allocations</th>
              <th scope="col">CPU</th>
              <th scope="col">Memory</th>
            </tr>
          </thead>
          <tbody>
            {c.Datacenters.map((dc) => (
              <tr key={dc.Name} data-testid="topo-dc">
                <td>{dc.Name}</td>
                <td>
                  {dc.Nodes.toLocaleString('en-US')} <span class="muted">({statusText(dc.Statuses)})</span>
                </td>
                <td>{dc.Allocations.toLocaleString('en-US')}</td>
                <td style={{ minWidth: '180px' }}>
                  <Meter label={`CPU of ${dc.Name}`} used={dc.Cpu.Allocated} total={dc.Cpu.Capacity} unit="MHz" />
                </td>
                <td style={{ minWidth: '180px' }}>
                  <Meter label={`Memory of ${dc.Name}`} used={dc.Memory.Allocated} total={dc.Memory.Capacity} unit="MB" />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** Nomad's filter expression matching allocations on any of `nodes`. */
function onNodesFilter(nodes: NodeUsage[]): string {
  return nodes.map((n) => `NodeID == ${JSON.stringify(n.ID)}`).join(' or ');
}

function NodeCards({ rows }: { rows: NodeUsage[] }) {
  // The allocations of this page's clients, by name, when there are few enough to draw.
  const count = rows.reduce((n, r) => n + r.Allocations, 0);
  const listed = rows.length > 0 && count > 0 && count <= MAX_LISTED_ALLOCS;
  const allocs = useLive<AllocListStub[]>(listed ? withQuery('/v1/allocations', { namespace: '*', resources: true, filter: onNodesFilter(rows) }) : undefined, ['Allocation']);
  const byNode = new Map<string, AllocListStub[]>();
  for (const a of allocs.data ?? []) if (holding(a)) byNode.set(a.NodeID, [...(byNode.get(a.NodeID) ?? []), a]);
  return (
    <div class="cards">
      {rows.map((n) => {
        const placed = byNode.get(n.ID) ?? [];
        return (
          <div class="topo-node" key={n.ID} data-testid="topo-node">
            <h3>
              <a href={href(`/clients/${n.ID}`)}>{n.Name}</a> <StatusBadge status={n.Status} />
            </h3>
            <UsageAmountMeters cpu={n.Cpu} mem={n.Memory} />
            <div class="muted" style={{ fontSize: '12px' }}>
              {n.Datacenter} · {n.Allocations} allocations
            </div>
            {listed && (
              <div class="topo-allocs" aria-label={`${placed.length} allocations on ${n.Name}`}>
                {placed.map((a) => {
                  const u = allocUsage(a);
                  const share = n.Memory.Capacity > 0 ? (u.mem / n.Memory.Capacity) * 100 : 0;
                  return (
                    <a
                      key={a.ID}
                      class="topo-alloc"
                      href={href(`/allocations/${a.ID}`)}
                      style={{ flexBasis: `${Math.max(share, 2)}%`, background: a.ClientStatus === 'running' ? undefined : '#b5bcc7' }}
                      title={`${a.Name} (${shortId(a.ID)}): ${u.cpu} MHz, ${u.mem} MB, ${a.ClientStatus}`}
                    >
                      {a.Name}
                    </a>
                  );
                })}
              </div>
            )}
          </div>
        );
      })}
    </div>
  );
}

export function TopologyPage() {
  const summary = useLive<ClusterUsage>('/v1/ui/topology', ['Node', 'Allocation']);
  const pager = usePager();
  const nodes = useLive<NodeUsage[]>(withQuery('/v1/ui/topology/nodes', { per_page: PAGE_SIZE, next_token: pager.token || undefined }), ['Node', 'Allocation']);
  return (
    <section aria-labelledby="topo-title">
      <h1 id="topo-title">Topology</h1>
      <LiveView live={summary} what="clients" empty={(c) => c.Nodes === 0} emptyText="No client has registered.">
        {(c) => <ClusterSummary c={c} />}
      </LiveView>
      {summary.data && summary.data.Nodes > 0 && (
        <>
          <h2>Clients</h2>
          <LiveView live={nodes} what="clients">
            {(rows) => (
              <>
                <Pager pager={pager} rows={rows.length} nextToken={nodes.nextToken} total={summary.data?.Nodes} what="clients" />
                <NodeCards rows={rows} />
              </>
            )}
          </LiveView>
        </>
      )}
    </section>
  );
}
