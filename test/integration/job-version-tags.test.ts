import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mockNode } from '../mock/factories.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

interface Version {
  Version: number;
  VersionTag?: { Name: string; Description: string; TaggedTime: number } | null;
}

test('job version tags through the API and the CLI; job services; job validation', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], minHeartbeatTtl: '1h' });
  try {
    const a = agent.address;
    assert.equal((await api(a, 'PUT', '/v1/internal/node/register', { Node: mockNode({ ID: randomUUID(), Status: 'ready' }) })).status, 200);
    const register = async (env: string) => {
      const parsed = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: sleepJobHcl('web', { env }), Canonicalize: true });
      assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: parsed.body })).status, 200);
    };
    const versions = async () => (await api<{ Versions: Version[] }>(a, 'GET', '/v1/job/web/versions')).body.Versions;
    const tagOf = async (v: number) => (await versions()).find((x) => x.Version === v)?.VersionTag ?? null;
    await register('one');
    await register('two');

    const tagged = await api(a, 'PUT', '/v1/job/web/versions/prod/tag', { Version: 0, Description: 'the first' });
    assert.equal(tagged.status, 200, tagged.text);
    const t0 = await tagOf(0);
    assert.deepEqual([t0?.Name, t0?.Description], ['prod', 'the first']);
    assert.ok((t0?.TaggedTime ?? 0) > 0);

    // One version per name; unknown versions and jobs are refused; nothing changes.
    const taken = await api(a, 'PUT', '/v1/job/web/versions/prod/tag', { Version: 1 });
    assert.equal(taken.status, 400);
    assert.match(taken.text, /tag "prod" already exists on a different version of the job \(version 0\)/);
    assert.equal(await tagOf(1), null);
    assert.equal((await api(a, 'PUT', '/v1/job/web/versions/x/tag', { Version: 9 })).status, 404);
    assert.equal((await api(a, 'PUT', '/v1/job/nope/versions/x/tag', { Version: 0 })).status, 404);

    // The CLI tags the current version; a new version starts untagged.
    const apply = await runCli(a, ['job', 'tag', 'apply', '-name', 'latest', '-description', 'now', 'web']);
    assert.equal(apply.code, 0, apply.stderr);
    assert.equal((await api<Version>(a, 'GET', '/v1/job/web')).body.VersionTag?.Name, 'latest');
    await register('three');
    assert.equal((await api<Version>(a, 'GET', '/v1/job/web')).body.VersionTag ?? null, null);
    assert.equal((await tagOf(1))?.Name, 'latest');

    // Unset.
    assert.equal((await api(a, 'DELETE', '/v1/job/web/versions/prod/tag')).status, 200);
    assert.equal(await tagOf(0), null);
    const again = await api(a, 'DELETE', '/v1/job/web/versions/prod/tag');
    assert.equal(again.status, 404);
    assert.match(again.text, /tag "prod" not found on job "web"/);
    const unset = await runCli(a, ['job', 'tag', 'unset', '-name', 'latest', 'web']);
    assert.equal(unset.code, 0, unset.stderr);
    assert.equal(await tagOf(1), null);

    // Services: Caravan registers none; an unknown job is a 404.
    const services = await api(a, 'GET', '/v1/job/web/services');
    assert.equal(services.status, 200, services.text);
    assert.deepEqual(services.body, []);
    assert.equal((await api(a, 'GET', '/v1/job/nope/services')).status, 404);
    // Actions: none in Caravan's jobspec; the sub-route never falls through to the job-ID route.
    assert.deepEqual((await api(a, 'GET', '/v1/job/web/actions')).body, []);
    assert.equal((await api(a, 'GET', '/v1/job/nope/actions')).status, 404);
    assert.deepEqual((await api(a, 'GET', '/v1/services')).body, []);
    assert.deepEqual((await api(a, 'GET', '/v1/services?namespace=*')).body, []);
    const byName = await api(a, 'GET', '/v1/service/web');
    assert.equal(byName.status, 200, byName.text);
    assert.deepEqual(byName.body, []);
    assert.equal((await api(a, 'DELETE', '/v1/service/web/some-id')).status, 404);

    // Validation: problems in the answer (200, as Nomad), nothing registered; PUT and POST alike.
    const good = await api<Record<string, unknown>>(a, 'POST', '/v1/jobs/parse', { JobHCL: sleepJobHcl('checked'), Canonicalize: true });
    const ok = await api<{ Error: string; ValidationErrors: string[] | null }>(a, 'PUT', '/v1/validate/job', { Job: good.body });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual([ok.body.Error, ok.body.ValidationErrors], ['', null]);
    const broken = structuredClone(good.body) as { TaskGroups: { Count: number; Tasks: { Driver: string }[] }[] };
    broken.TaskGroups[0]!.Count = -1;
    broken.TaskGroups[0]!.Tasks[0]!.Driver = '';
    const bad = await api<{ Error: string; ValidationErrors: string[] }>(a, 'POST', '/v1/validate/job', { Job: broken });
    assert.equal(bad.status, 200, bad.text);
    assert.equal(bad.body.ValidationErrors.length, 2, bad.text);
    assert.ok(bad.body.ValidationErrors.some((e) => /driver/i.test(e)), bad.text);
    assert.match(bad.body.Error, /2 errors occurred/);
    assert.equal((await api(a, 'GET', '/v1/job/checked')).status, 404);
    assert.equal((await api(a, 'POST', '/v1/validate/job', { NotAJob: 1 })).status, 400);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
