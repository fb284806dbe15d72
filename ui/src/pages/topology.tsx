/** Topology: every client's CPU and memory capacity and the allocations packed on it, live. */
import type { AllocListStub } from '../../../src/structs/alloc.js';
import type { NodeListStub } from '../../../src/structs/node.js';
import type { NodeReservedResources, NodeResources, AllocatedResources } from '../../../src/structs/resources.js';
import { LiveView } from '../components/states.js';
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

export function TopologyPage() {
  const nodes = useLive<NodeListStub[]>('/v1/nodes?resources=true', ['Node']);
  const allocs = useLive<AllocListStub[]>('/v1/allocations?namespace=*', ['Allocation']);
  return (
    <section aria-labelledby="topo-title">
      <h1 id="topo-title">Topology</h1>
      <LiveView live={nodes} what="clients" empty={(n) => n.length === 0} emptyText="No client has registered.">
        {(ns) => {
          const byNode = new Map<string, AllocListStub[]>();
          for (const a of allocs.data ?? []) if (holding(a)) byNode.set(a.NodeID, [...(byNode.get(a.NodeID) ?? []), a]);
          return (
            <div class="cards">
              {ns.map((n) => {
                const placed = byNode.get(n.ID) ?? [];
                const cap = capacity(n.NodeResources, n.ReservedResources);
                return (
                  <div class="topo-node" key={n.ID} data-testid="topo-node">
                    <h3>
                      <a href={href(`/clients/${n.ID}`)}>{n.Name}</a> <StatusBadge status={n.Status} />
                    </h3>
                    <UsageMeters node={n} allocs={placed} />
                    <div class="topo-allocs" aria-label={`${placed.length} allocations on ${n.Name}`}>
                      {placed.map((a) => {
                        const u = allocUsage(a);
                        const share = cap.mem > 0 ? (u.mem / cap.mem) * 100 : 0;
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
                  </div>
                );
              })}
            </div>
          );
        }}
      </LiveView>
    </section>
  );
}
