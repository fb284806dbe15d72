/** Client nodes: the list, and one client with its drivers, attributes, meta, resources, allocations and drain/eligibility controls. */
import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type { StreamEvent } from '../../../src/server/events/event.js';
import { allocStub, type Allocation } from '../../../src/structs/alloc.js';
import type { Node, NodeListStub } from '../../../src/structs/node.js';
import { ActionButton } from '../components/action-button.js';
import { AllocTable } from '../components/alloc-table.js';
import { LiveView } from '../components/states.js';
import { StatusBadge } from '../components/summary-bar.js';
import { apiWrite, withQuery } from '../lib/api.js';
import { PAGE_SIZE, Pager, usePager } from '../components/pager.js';
import type { ClusterUsage } from '../../../src/http/api-views/node-usage-views.js';
import { shortId } from '../lib/format.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';
import { UsageMeters } from './topology.js';
import { sessionAllowsNode, useSession } from '../lib/session.js';

export function ClientsListPage() {
  // One page of nodes at a time (10,000 rows would take seconds to render and to refresh); the
  // total comes from the cluster summary, which the list API does not carry.
  const pager = usePager();
  const live = useLive<NodeListStub[]>(withQuery('/v1/nodes', { per_page: PAGE_SIZE, next_token: pager.token || undefined }), ['Node']);
  const summary = useLive<ClusterUsage>('/v1/ui/topology', ['Node']);
  return (
    <section aria-labelledby="clients-title">
      <h1 id="clients-title">Clients</h1>
      <LiveView live={live} what="clients" empty={(n) => n.length === 0 && pager.page === 1} emptyText="No client has registered.">
        {(nodes) => (
          <>
          <Pager pager={pager} rows={nodes.length} nextToken={live.nextToken} total={summary.data?.Nodes} what="clients" />
          <table class="list" aria-label="Clients">
            <thead>
              <tr>
                <th scope="col">ID</th>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col">Eligibility</th>
                <th scope="col" class="hide-narrow">Address</th>
                <th scope="col" class="hide-narrow">Datacenter</th>
                <th scope="col" class="hide-narrow">Pool</th>
              </tr>
            </thead>
            <tbody>
              {nodes.map((n) => (
                <tr key={n.ID} data-testid="client-row">
                  <td>
                    <a class="mono" href={href(`/clients/${n.ID}`)}>
                      {shortId(n.ID)}
                    </a>
                  </td>
                  <td>{n.Name}</td>
                  <td>
                    <StatusBadge status={n.Status} />
                    {n.Drain && (
                      <>
                        {' '}
                        <StatusBadge status="draining" />
                      </>
                    )}
                  </td>
                  <td>
                    <StatusBadge status={n.SchedulingEligibility} />
                  </td>
                  <td class="hide-narrow mono">{n.Address}</td>
                  <td class="hide-narrow">{n.Datacenter}</td>
                  <td class="hide-narrow">{n.NodePool}</td>
                </tr>
              ))}
            </tbody>
          </table>
          </>
        )}
      </LiveView>
    </section>
  );
}

function nodeWatch(id: string): (ev: StreamEvent) => boolean {
  return (ev) =>
    (ev.Topic === 'Node' && (ev.Payload as { Node: Node }).Node.ID === id) ||
    (ev.Topic === 'Allocation' && (ev.Payload as { Allocation: Allocation }).Allocation.NodeID === id);
}

function DrainControls({ node }: { node: Node }) {
  const [deadline, setDeadline] = useState('1h');
  const [ignoreSystem, setIgnoreSystem] = useState(false);
  const eligible = node.SchedulingEligibility === 'eligible';
  // Eligibility and drains need the node rule at write.
  const deniedBy = sessionAllowsNode(useSession(), 'write') ? undefined : 'node write';
  const deadlineNs = (): number => {
    const m = /^(\d+)(s|m|h)$/.exec(deadline.trim());
    if (!m) throw new Error(`deadline: want a duration such as 30s, 10m or 1h, got ${JSON.stringify(deadline)}`);
    return Number(m[1]) * { s: 1, m: 60, h: 3600 }[m[2] as 's' | 'm' | 'h'] * 1e9;
  };
  return (
    <div class="card">
      <h3>Scheduling</h3>
      <div class="actions">
        <ActionButton
          label={eligible ? 'Mark ineligible' : 'Mark eligible'}
          deniedBy={deniedBy}
          run={() => apiWrite('POST', `/v1/node/${node.ID}/eligibility`, { NodeID: node.ID, Eligibility: eligible ? 'ineligible' : 'eligible' })}
        />
      </div>
      {node.DrainStrategy ? (
        <div class="actions" style={{ marginTop: '8px' }}>
          <span>Draining since {new Date(node.DrainStrategy.StartedAt).toLocaleString()}.</span>
          <ActionButton label="Stop drain" deniedBy={deniedBy} run={() => apiWrite('PUT', `/v1/node/${node.ID}/drain`, { NodeID: node.ID, DrainSpec: null, MarkEligible: true })} />
        </div>
      ) : (
        <form class="actions" style={{ marginTop: '8px' }} onSubmit={(e) => e.preventDefault()}>
          <label>
            Deadline <input type="text" value={deadline} style={{ width: '5em' }} onInput={(e) => setDeadline(e.currentTarget.value)} />
          </label>
          <label>
            <input type="checkbox" checked={ignoreSystem} onChange={(e) => setIgnoreSystem(e.currentTarget.checked)} /> Ignore system jobs
          </label>
          <ActionButton
            label="Drain"
            deniedBy={deniedBy}
            danger
            confirm="Yes, drain this client"
            run={() => apiWrite('PUT', `/v1/node/${node.ID}/drain`, { NodeID: node.ID, DrainSpec: { Deadline: deadlineNs(), IgnoreSystemJobs: ignoreSystem } })}
          />
        </form>
      )}
    </div>
  );
}

function KeyValues({ label, values }: { label: string; values: Record<string, string> }) {
  const keys = Object.keys(values).sort();
  if (keys.length === 0) return <p class="muted">No {label.toLowerCase()}.</p>;
  return (
    <dl class="facts" aria-label={label}>
      {keys.map((k) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{values[k]}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

export function ClientDetailPage({ id }: { id: string }) {
  const watch = nodeWatch(id);
  const node = useLive<Node>(`/v1/node/${encodeURIComponent(id)}`, watch);
  const allocs = useLive<Allocation[]>(`/v1/node/${encodeURIComponent(id)}/allocations`, watch);
  return (
    <section aria-labelledby="client-title">
      <p class="crumbs">
        <a href={href('/clients')}>Clients</a>
      </p>
      <LiveView live={node} what="client">
        {(n) => (
          <>
            <div class="page-head">
              <h1 id="client-title">{n.Name}</h1>
              <StatusBadge status={n.Status} /> <StatusBadge status={n.SchedulingEligibility} />
              {n.Drain && <StatusBadge status="draining" />}
            </div>
            <dl class="facts">
              <dt>ID</dt>
              <dd class="mono">{n.ID}</dd>
              <dt>Address</dt>
              <dd class="mono">{n.HTTPAddr}</dd>
              <dt>Datacenter / pool</dt>
              <dd>
                {n.Datacenter} / {n.NodePool}
              </dd>
              <dt>Class</dt>
              <dd>{n.NodeClass || '—'}</dd>
            </dl>
            <div class="cards" style={{ marginTop: '12px' }}>
              <DrainControls node={n} />
              <div class="card">
                <h3>Resources in use</h3>
                <UsageMeters node={n} allocs={allocs.data ?? []} />
              </div>
            </div>
            <h2>Allocations</h2>
            <LiveView live={allocs} what="allocations" empty={(a) => a.length === 0} emptyText="No allocation on this client.">
              {(a) => <AllocTable allocs={a.map(allocStub)} showJob showNode={false} />}
            </LiveView>
            <h2>Drivers</h2>
            <table class="list" aria-label="Drivers">
              <thead>
                <tr>
                  <th scope="col">Driver</th>
                  <th scope="col">Detected</th>
                  <th scope="col">Healthy</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(n.Drivers ?? {}).map(([name, d]) => (
                  <tr key={name}>
                    <td>{name}</td>
                    <td>{d.Detected ? 'yes' : 'no'}</td>
                    <td>
                      <StatusBadge status={d.Healthy ? 'healthy' : 'unhealthy'} />
                    </td>
                    <td>{d.HealthDescription}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Attributes</h2>
            <KeyValues label="Attributes" values={n.Attributes ?? {}} />
            <h2>Meta</h2>
            <KeyValues label="Meta" values={n.Meta ?? {}} />
            <h2>Events</h2>
            <ol class="timeline">
              {[...(n.Events ?? [])].reverse().map((e, i) => (
                <li key={i}>
                  <strong>{e.Message}</strong> <span class="muted">{new Date(e.Timestamp).toLocaleString()}</span>
                </li>
              ))}
            </ol>
          </>
        )}
      </LiveView>
    </section>
  );
}
