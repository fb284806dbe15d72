import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startAgent } from './helpers/agent-process.js';

function hcl(id: string, team: string, group: string, kind = ''): string {
  return `
job "${id}" {
  datacenters = ["dc1"]
  ${kind}
  meta {
    team = "${team}"
  }
  group "${group}" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
    }
  }
}`;
}

async function register(address: string, id: string, team: string, group: string, kind = ''): Promise<void> {
  const parsed = await api<Record<string, unknown>>(address, 'POST', '/v1/jobs/parse', { JobHCL: hcl(id, team, group, kind), Canonicalize: true });
  assert.equal(parsed.status, 200, parsed.text);
  const res = await api(address, 'PUT', '/v1/jobs', { Job: parsed.body });
  assert.equal(res.status, 200, res.text);
}

async function get(address: string, path: string): Promise<{ status: number; text: string; ids: string[]; next: string | null }> {
  const res = await fetch(`${address}${path}`);
  const text = await res.text();
  let ids: string[] = [];
  if (res.status === 200) ids = (JSON.parse(text) as { ID: string }[]).map((o) => o.ID);
  return { status: res.status, text, ids, next: res.headers.get('x-nomad-nexttoken') };
}

test('list endpoints: filter, per_page/next_token/reverse and region through a real agent', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    await register(a, 'alpha', 'infra', 'web');
    await register(a, 'bravo', 'web', 'cache');
    await register(a, 'charlie', 'infra', 'cache');
    await register(a, 'delta', 'web', 'web');

    const q = (f: string) => encodeURIComponent(f);
    assert.deepEqual((await get(a, `/v1/jobs?filter=${q('Meta.team == "infra"')}`)).ids.sort(), ['alpha', 'charlie']);
    assert.deepEqual((await get(a, `/v1/jobs?filter=${q('"cache" in TaskGroups.Name and not (Meta.team == "web")')}`)).ids, ['charlie']);
    assert.deepEqual((await get(a, `/v1/jobs?filter=${q('ID matches "^(a|d)"')}`)).ids.sort(), ['alpha', 'delta']);

    // Pages of three, then the rest; the token is the next page's first job, as Nomad's "namespace.ID".
    const p1 = await get(a, '/v1/jobs?per_page=3');
    assert.deepEqual(p1.ids, ['alpha', 'bravo', 'charlie']);
    assert.equal(p1.next, 'default.delta');
    const p2 = await get(a, `/v1/jobs?per_page=3&next_token=${p1.next}`);
    assert.deepEqual(p2.ids, ['delta']);
    assert.equal(p2.next, null);
    const rev = await get(a, '/v1/jobs?per_page=2&reverse=true');
    assert.deepEqual(rev.ids, ['delta', 'charlie']);
    assert.equal(rev.next, 'default.bravo');
    const filteredPage = await get(a, `/v1/jobs?per_page=1&filter=${q('Meta.team == "web"')}`);
    assert.deepEqual(filteredPage.ids, ['bravo']);
    assert.equal(filteredPage.next, 'default.delta');

    // Every list endpoint applies the same options: evaluations and allocations too.
    const evals = await get(a, `/v1/evaluations?filter=${q('JobID == "bravo"')}`);
    assert.equal(evals.status, 200, evals.text);
    assert.ok(evals.ids.length >= 1);
    const evalJobs = await fetch(`${a}/v1/evaluations?filter=${q('JobID == "bravo"')}`).then((r) => r.json() as Promise<{ JobID: string }[]>);
    assert.ok(evalJobs.every((e) => e.JobID === 'bravo'));
    assert.equal((await get(a, '/v1/evaluations?per_page=1')).ids.length, 1);
    assert.equal((await get(a, `/v1/allocations?filter=${q('JobID == "nope"')}`)).ids.length, 0);
    assert.equal((await get(a, `/v1/nodes?filter=${q('Status == "ready"')}`)).status, 200);
    assert.equal((await get(a, `/v1/deployments?filter=${q('Status == "running"')}`)).status, 200);
    assert.equal((await get(a, `/v1/namespaces?filter=${q('Name == "default"')}`)).status, 200);

    // A malformed filter is a 400 naming the problem, on every list endpoint, never ignored.
    for (const path of ['/v1/jobs', '/v1/allocations', '/v1/evaluations', '/v1/nodes', '/v1/deployments', '/v1/namespaces']) {
      const bad = await get(a, `${path}?filter=${q('Meta.team = "x"')}`);
      assert.equal(bad.status, 400, `${path}: ${bad.text}`);
      assert.match(bad.text, /failed to read filter expression: unexpected "=" at position 11/);
    }
    const badPage = await get(a, '/v1/jobs?per_page=x');
    assert.equal(badPage.status, 400);
    assert.match(badPage.text, /per_page/);

    // The filters Nomad's CLI sends to find a job to dispatch or to force (go-bexpr's `is nil`).
    await register(a, 'echo', 'infra', 'web', 'type = "batch"\n  parameterized {\n  }');
    await register(a, 'foxtrot', 'infra', 'web', 'type = "batch"\n  periodic {\n    crons = ["0 3 * * *"]\n  }');
    assert.deepEqual((await get(a, `/v1/jobs?filter=${q('ParentID == "" and ParameterizedJob is not nil')}`)).ids, ['echo']);
    assert.deepEqual((await get(a, `/v1/jobs?filter=${q('Periodic is not nil')}`)).ids, ['foxtrot']);

    // region= names this agent's region or is refused.
    assert.equal((await get(a, '/v1/jobs?region=global')).status, 200);
    const other = await get(a, '/v1/jobs?region=mars');
    assert.equal(other.status, 400);
    assert.match(other.text, /No path to region "mars"/);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
