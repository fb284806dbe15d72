/** Servers (the Raft peers, the leader, the agent members) and the cluster-wide evaluations and deployments lists. */
import type { RaftServer } from '../../../src/http/routes/operator.js';
import type { Deployment } from '../../../src/structs/deployment.js';
import type { Evaluation } from '../../../src/structs/eval.js';
import { ErrorBox, LiveView, Loading } from '../components/states.js';
import { StatusBadge } from '../components/summary-bar.js';
import { getNamespace, withQuery } from '../lib/api.js';
import { usePoll } from '../lib/use-poll.js';
import { useLive } from '../lib/use-live.js';
import { DeploymentTable, EvalTable } from './job-history.js';

interface Member {
  Name: string;
  Addr: string;
  Port: number;
  Status: string;
  Tags: Record<string, string>;
}

/** Leadership produces no event: the servers page samples every 5 s while it is open. */
const SERVER_POLL_MS = 5000;

export function ServersPage() {
  const raft = usePoll<{ Servers: RaftServer[] }>('/v1/operator/raft/configuration', SERVER_POLL_MS, 1);
  const members = usePoll<{ Members: Member[] }>('/v1/agent/members', SERVER_POLL_MS, 1);
  const peers = raft.samples[0]?.Servers;
  return (
    <section aria-labelledby="servers-title">
      <h1 id="servers-title">Servers</h1>
      {raft.error && <ErrorBox error={raft.error} />}
      {!peers && !raft.error && <Loading what="servers" />}
      {peers && (
        <table class="list" aria-label="Servers">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Address</th>
              <th scope="col">Role</th>
              <th scope="col">Voter</th>
            </tr>
          </thead>
          <tbody>
            {peers.map((s) => (
              <tr key={s.Address} data-testid="server-row">
                <td>{s.Node}</td>
                <td class="mono">{s.Address}</td>
                <td>{s.Leader ? <StatusBadge status="leader" /> : 'follower'}</td>
                <td>{s.Voter ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Agent members</h2>
      {members.error && <ErrorBox error={members.error} />}
      {members.samples[0] && (
        <table class="list" aria-label="Members">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Address</th>
              <th scope="col">Status</th>
              <th scope="col">Datacenter</th>
              <th scope="col">Version</th>
            </tr>
          </thead>
          <tbody>
            {members.samples[0].Members.map((m) => (
              <tr key={m.Name}>
                <td>{m.Name}</td>
                <td class="mono">
                  {m.Addr}:{m.Port}
                </td>
                <td>
                  <StatusBadge status={m.Status} />
                </td>
                <td>{m.Tags.dc}</td>
                <td>{m.Tags.build}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

export function EvaluationsPage() {
  const live = useLive<Evaluation[]>(withQuery('/v1/evaluations', { namespace: getNamespace() }), ['Evaluation']);
  return (
    <section aria-labelledby="evals-title">
      <h1 id="evals-title">Evaluations</h1>
      <LiveView live={live} what="evaluations" empty={(e) => e.length === 0}>
        {(es) => <EvalTable evals={es.slice().sort((a, b) => b.CreateIndex - a.CreateIndex).slice(0, 200)} showJob />}
      </LiveView>
    </section>
  );
}

export function DeploymentsPage() {
  const live = useLive<Deployment[]>(withQuery('/v1/deployments', { namespace: getNamespace() }), ['Deployment']);
  return (
    <section aria-labelledby="deployments-title">
      <h1 id="deployments-title">Deployments</h1>
      <LiveView live={live} what="deployments" empty={(d) => d.length === 0}>
        {(ds) => <DeploymentTable deployments={ds} showJob />}
      </LiveView>
    </section>
  );
}
