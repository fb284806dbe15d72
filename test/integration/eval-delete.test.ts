import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mockNode } from '../mock/factories.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { waitFor } from './helpers/client-agent.js';
import { sleepJobHcl } from './helpers/sleep-job.js';


test('evaluations: count with filters, delete by ID or filter only with the broker paused and when safe; deployment unblock', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], minHeartbeatTtl: '1h' });
  try {
    const a = agent.address;
    const node = mockNode({ ID: randomUUID(), Name: 'n1', Status: 'ready' });
    assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: node })).status, 200);
    for (const id of ['web', 'api']) {
      const parsed = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: sleepJobHcl(id), Canonicalize: true });
      assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    }
    const webEval = await waitFor('web placed', async () => {
      const evals = (await api<{ ID: string; Status: string }[]>(a, 'GET', '/v1/job/web/evaluations')).body;
      const allocs = (await api<unknown[]>(a, 'GET', '/v1/job/web/allocations')).body;
      return evals[0]?.Status === 'complete' && allocs.length > 0 ? evals[0] : undefined;
    });

    // Nomad's metric names beside Caravan's, in the JSON summary and the Prometheus text.
    const metrics = await api<{ Gauges: { Name: string; Value: number }[] }>(a, 'GET', '/v1/metrics');
    const gauge = (name: string) => metrics.body.Gauges.find((g) => g.Name === name)?.Value;
    const jobs = ['pending', 'running', 'dead'].map((st) => gauge(`nomad.nomad.job_status.${st}`));
    assert.ok(jobs.every((v) => v !== undefined), JSON.stringify(metrics.body.Gauges.map((g) => g.Name)));
    assert.equal(jobs.reduce((x, y) => x! + y!, 0), 2);
    assert.equal(gauge('nomad.nomad.heartbeat.active'), 1);
    assert.ok((gauge('nomad.runtime.alloc_bytes') ?? 0) > 0);
    const prom = await fetch(`${a}/v1/metrics?format=prometheus`).then((r) => r.text());
    assert.match(prom, /^nomad_nomad_job_status_running \d+$/m);
    assert.match(prom, /^caravan_state_jobs 2$/m);

    const count = await api<{ Count: number }>(a, 'GET', '/v1/evaluations/count');
    assert.equal(count.status, 200, count.text);
    assert.ok(count.body.Count >= 2);
    assert.equal((await api<{ Count: number }>(a, 'GET', `/v1/evaluations/count?filter=${encodeURIComponent('JobID == "web"')}`)).body.Count, 1);
    const badFilter = await api(a, 'GET', `/v1/evaluations/count?filter=${encodeURIComponent('JobID = "web"')}`);
    assert.equal(badFilter.status, 400);

    // Refused while the broker runs, for both or neither of IDs and filter, and for an eval whose allocation runs.
    const running = await api(a, 'DELETE', '/v1/evaluations', { EvalIDs: [webEval.ID] });
    assert.equal(running.status, 400);
    assert.match(running.text, /eval broker must be paused to delete evals/);
    const config = (await api<Record<string, unknown>>(a, 'GET', '/v1/operator/scheduler/configuration')).body['SchedulerConfig'] as Record<string, unknown>;
    assert.equal((await api(a, 'PUT', '/v1/operator/scheduler/configuration', { ...config, PauseEvalBroker: true })).status, 200);
    assert.match((await api(a, 'DELETE', '/v1/evaluations', { EvalIDs: [webEval.ID], Filter: 'JobID == "web"' })).text, /both ID and filter/);
    assert.match((await api(a, 'DELETE', '/v1/evaluations', {})).text, /either ID or filter/);
    const unsafe = await api(a, 'DELETE', '/v1/evaluations', { EvalIDs: [webEval.ID] });
    assert.equal(unsafe.status, 400);
    assert.match(unsafe.text, /not safe to delete/);
    assert.equal((await api(a, 'GET', `/v1/evaluation/${webEval.ID}`)).status, 200);

    // Once the job is stopped its evaluations are safe: by filter through the API, by ID through the CLI.
    assert.equal((await api(a, 'DELETE', '/v1/job/web')).status, 200);
    await waitFor('web stopped', async () => {
      const evals = (await api<{ Status: string }[]>(a, 'GET', '/v1/job/web/evaluations')).body;
      return evals.length === 2 && evals.every((e) => e.Status === 'complete') ? true : undefined;
    });
    const webEvals = (await api<{ ID: string }[]>(a, 'GET', '/v1/job/web/evaluations')).body;
    const cli = await runCli(a, ['eval', 'delete', webEvals[0]!.ID.slice(0, 8)]);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /Successfully deleted 1 evaluation/);
    const byFilter = await api<{ Count: number }>(a, 'DELETE', '/v1/evaluations', { Filter: 'JobID == "web" or JobID == "api"' });
    assert.equal(byFilter.status, 200, byFilter.text);
    assert.equal(byFilter.body.Count, 1, 'the api job still runs: its evaluation is skipped');
    assert.equal((await api<{ Count: number }>(a, 'GET', `/v1/evaluations/count?filter=${encodeURIComponent('JobID == "web"')}`)).body.Count, 0);
    assert.equal((await api<{ Count: number }>(a, 'GET', `/v1/evaluations/count?filter=${encodeURIComponent('JobID == "api"')}`)).body.Count, 1);

    // Unblock: a 404 for an unknown deployment (no deployment is ever blocked in one region).
    assert.equal((await api(a, 'PUT', '/v1/deployment/unblock/00000000-0000-0000-0000-000000000000')).status, 404);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
