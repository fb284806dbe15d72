/**
 * Every HTTP path Nomad's Go API client (api/*.go), CLI, Terraform provider and web UI call is
 * a route on Caravan: called against a real `-dev` agent with plausible IDs, none may answer
 * Caravan's route miss (404 "404 page not found", X-Caravan-Error-Code HTTP_ROUTE_NOT_FOUND).
 * A 404 for an object that does not exist ("job not found", "alloc not found") is fine: it is
 * the route's own answer. Streams are checked on their status and headers, then closed.
 * Features Caravan does not have yet (the workload-identity keyring, node identities) are
 * routes too: they answer a clear error, never the route miss
 * (their answers: unsupported-feature-routes.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

/** [method, path]: ID is an object's ID, JOB a registered job. */
const CALLED_BY_NOMAD_CLIENTS: readonly (readonly [string, string])[] = [
  ['GET', '/v1/acl/token/self'],
  ['GET', '/v1/acl/tokens'],
  ['GET', '/v1/acl/policies'],
  ['GET', '/v1/acl/roles'],
  ['GET', '/v1/acl/auth-methods'],
  ['GET', '/v1/acl/binding-rules'],
  ['GET', '/v1/agent/self'],
  ['GET', '/v1/agent/members'],
  ['GET', '/v1/agent/servers'],
  ['PUT', '/v1/agent/servers?address=127.0.0.1:4647'],
  ['GET', '/v1/agent/health'],
  ['GET', '/v1/agent/host'],
  ['PUT', '/v1/agent/force-leave?node=x'],
  ['PUT', '/v1/agent/join?address=127.0.0.1:4648'],
  ['GET', '/v1/agent/keyring/list'],
  ['GET', '/v1/agent/pprof/cmdline'],
  ['GET', '/v1/allocations'],
  ['GET', '/v1/allocation/ID'],
  ['GET', '/v1/allocation/ID/services'],
  ['GET', '/v1/allocation/ID/checks'],
  ['PUT', '/v1/allocation/ID/stop'],
  ['POST', '/v1/allocation/ID/pause'],
  ['GET', '/v1/client/allocation/ID/stats'],
  ['GET', '/v1/client/allocation/ID/checks'],
  ['PUT', '/v1/client/allocation/ID/restart'],
  ['PUT', '/v1/client/allocation/ID/signal'],
  ['GET', '/v1/client/allocation/ID/gc'],
  ['GET', '/v1/client/fs/ls/ID'],
  ['GET', '/v1/client/fs/stat/ID'],
  ['GET', '/v1/client/fs/cat/ID'],
  ['GET', '/v1/client/fs/readat/ID'],
  ['GET', '/v1/client/fs/stream/ID'],
  ['GET', '/v1/client/fs/logs/ID'],
  ['GET', '/v1/client/stats'],
  ['GET', '/v1/client/gc'],
  ['GET', '/v1/client/metadata'],
  ['GET', '/v1/deployments'],
  ['GET', '/v1/deployment/ID'],
  ['GET', '/v1/deployment/allocations/ID'],
  ['PUT', '/v1/deployment/fail/ID'],
  ['PUT', '/v1/deployment/pause/ID'],
  ['PUT', '/v1/deployment/promote/ID'],
  ['PUT', '/v1/deployment/allocation-health/ID'],
  ['PUT', '/v1/deployment/unblock/ID'],
  ['GET', '/v1/evaluations'],
  ['GET', '/v1/evaluations/count'],
  ['GET', '/v1/evaluation/ID'],
  ['GET', '/v1/evaluation/ID/allocations'],
  ['DELETE', '/v1/evaluations'],
  ['GET', '/v1/event/stream'],
  ['GET', '/v1/jobs'],
  ['PUT', '/v1/jobs'],
  ['POST', '/v1/jobs/parse'],
  ['GET', '/v1/jobs/statuses'],
  ['POST', '/v1/validate/job'],
  ['GET', '/v1/job/JOB'],
  ['GET', '/v1/job/JOB/versions'],
  ['GET', '/v1/job/JOB/allocations'],
  ['GET', '/v1/job/JOB/evaluations'],
  ['GET', '/v1/job/JOB/deployments'],
  ['GET', '/v1/job/JOB/deployment'],
  ['GET', '/v1/job/JOB/summary'],
  ['GET', '/v1/job/JOB/scale'],
  ['GET', '/v1/job/JOB/services'],
  ['GET', '/v1/job/JOB/submission?version=0'],
  ['GET', '/v1/job/JOB/actions'],
  ['PUT', '/v1/job/JOB/plan'],
  ['PUT', '/v1/job/JOB/evaluate'],
  ['PUT', '/v1/job/JOB/revert'],
  ['PUT', '/v1/job/JOB/stable'],
  ['PUT', '/v1/job/JOB/dispatch'],
  ['PUT', '/v1/job/JOB/periodic/force'],
  ['PUT', '/v1/job/JOB/scale'],
  ['POST', '/v1/job/JOB/versions/v1/tag'],
  ['GET', '/v1/job/JOB/versions?diffs=true'],
  ['PUT', '/v1/job/JOB/action'],
  ['GET', '/v1/job/JOB/statuses'],
  ['DELETE', '/v1/job/JOB'],
  ['GET', '/v1/namespaces'],
  ['GET', '/v1/namespace/default'],
  ['GET', '/v1/nodes'],
  ['GET', '/v1/node/ID'],
  ['GET', '/v1/node/ID/allocations'],
  ['PUT', '/v1/node/ID/drain'],
  ['PUT', '/v1/node/ID/eligibility'],
  ['PUT', '/v1/node/ID/evaluate'],
  ['PUT', '/v1/node/ID/purge'],
  ['GET', '/v1/node/pools'],
  ['GET', '/v1/node/pool/default'],
  ['GET', '/v1/node/pool/default/nodes'],
  ['GET', '/v1/node/pool/default/jobs'],
  ['GET', '/v1/operator/raft/configuration'],
  ['DELETE', '/v1/operator/raft/peer?address=x'],
  ['PUT', '/v1/operator/raft/transfer-leadership?address=x'],
  ['GET', '/v1/operator/scheduler/configuration'],
  ['GET', '/v1/operator/autopilot/configuration'],
  ['GET', '/v1/operator/autopilot/health'],
  ['GET', '/v1/operator/snapshot'],
  ['GET', '/v1/operator/license'],
  ['GET', '/v1/operator/upgrade-check/vault-workload-identity'],
  ['GET', '/v1/operator/utilization'],
  ['GET', '/v1/metrics'],
  ['GET', '/v1/regions'],
  ['GET', '/v1/status/leader'],
  ['GET', '/v1/status/peers'],
  ['PUT', '/v1/system/gc'],
  ['PUT', '/v1/system/reconcile/summaries'],
  ['POST', '/v1/search/fuzzy'],
  ['GET', '/v1/services'],
  ['GET', '/v1/service/web'],
  ['GET', '/v1/vars'],
  ['GET', '/v1/var/a/b'],
  ['GET', '/v1/volumes?type=csi'],
  ['GET', '/v1/volumes?type=host'],
  ['GET', '/v1/volume/csi/vol'],
  ['GET', '/v1/volumes/snapshot?plugin_id=x'],
  ['GET', '/v1/volumes/external?plugin_id=x'],
  ['GET', '/v1/plugins?type=csi'],
  ['GET', '/v1/plugin/csi/p'],
  ['GET', '/v1/scaling/policies'],
  ['GET', '/v1/scaling/policy/ID'],
  ['GET', '/v1/quotas'],
  ['GET', '/v1/sentinel/policies'],
  ['GET', '/v1/recommendations'],
  ['GET', '/v1/acl/identity/client-introduction-token'],
  ['GET', '/v1/client/allocation/ID/exec'],
  ['GET', '/v1/job/JOB/allocations?all=true'],
  ['GET', '/ui/'],
  ['GET', '/'],
  ['GET', '/v1/agent/monitor'],
  ['PUT', '/v1/operator/autopilot/configuration'],
  ['PUT', '/v1/search/fuzzy'],
  ['GET', '/v1/allocation/ID/pause'],
  ['GET', '/v1/var/a'],
  ['GET', '/v1/agent/schedulers'],
  ['GET', '/v1/agent/schedulers/config'],
  ['PUT', '/v1/agent/schedulers/config'],
  ['GET', '/v1/operator/keyring/keys'],
  ['PUT', '/v1/operator/keyring/rotate'],
  ['DELETE', '/v1/operator/keyring/key/ID'],
  ['GET', '/.well-known/jwks.json'],
  ['GET', '/.well-known/openid-configuration'],
  ['GET', '/v1/volume/host/vol'],
  ['PUT', '/v1/volume/host/create'],
  ['PUT', '/v1/volume/host/register'],
  ['DELETE', '/v1/volume/host/vol'],
  ['GET', '/v1/client/identity'],
  ['POST', '/v1/client/identity/renew'],
];

/** Whether `method path` answers Caravan's route miss. */
async function isRouteMiss(address: string, method: string, path: string): Promise<{ miss: boolean; status: number }> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), 15_000);
  try {
    const withBody = method !== 'GET' && method !== 'HEAD';
    const res = await fetch(`${address}${path}`, {
      method,
      signal: ac.signal,
      ...(withBody ? { body: '{}', headers: { 'Content-Type': 'application/json' } } : {}),
    });
    const code = res.headers.get('x-caravan-error-code');
    if (res.status !== 404) {
      await res.body?.cancel();
      return { miss: false, status: res.status };
    }
    const text = await res.text();
    return { miss: code === 'HTTP_ROUTE_NOT_FOUND' || text === '404 page not found', status: res.status };
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

function fill(path: string, ids: { alloc: string; job: string }): string {
  return path.replace(/\bID\b/g, ids.alloc).replace(/\bJOB\b/g, ids.job);
}

test('no endpoint Nomad\'s clients call answers Caravan\'s route-not-found', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  try {
    const a = agent.address;
    const parsed = await api(a, 'POST', '/v1/jobs/parse', { JobHCL: sleepJobHcl('sweep', { cpu: 50, memory: 32 }), Canonicalize: true });
    assert.equal(parsed.status, 200, parsed.text);
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    // A plausible allocation ID: the job's own when it is placed, else a well-formed unknown one.
    const allocs = (await api<{ ID: string }[]>(a, 'GET', '/v1/job/sweep/allocations')).body;
    const ids = { alloc: allocs[0]?.ID ?? '00000000-0000-0000-0000-000000000000', job: 'sweep' };
    const misses: string[] = [];
    // Deleting the job last keeps it there for every path that names it.
    const ordered = [...CALLED_BY_NOMAD_CLIENTS].sort(([m1], [m2]) => Number(m1 === 'DELETE') - Number(m2 === 'DELETE'));
    for (const [method, path] of ordered) {
      const r = await isRouteMiss(a, method, fill(path, ids));
      if (r.miss) misses.push(`${method} ${path}`);
    }
    assert.deepEqual(misses, [], `route misses:\n${misses.join('\n')}`);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
