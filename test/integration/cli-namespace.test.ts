/**
 * `caravan namespace …` and the `-namespace` flag / NOMAD_NAMESPACE through a real agent: apply
 * from a name and from a specification file, list, status, inspect, jobs run and listed in a
 * namespace, and delete refused while a job is live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Namespace } from '../../src/structs/namespace.js';
import { api, runCli, startAgent } from './helpers/agent-process.js';
import { sleepJobHcl } from './helpers/sleep-job.js';

test('caravan namespace apply/list/status/inspect/delete, and jobs in a namespace via -namespace and NOMAD_NAMESPACE', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  const dir = await mkdtemp(join(tmpdir(), 'caravan-ns-cli-'));
  try {
    const a = agent.address;
    const ok = async (args: string[], env?: NodeJS.ProcessEnv) => {
      const r = await runCli(a, args, env ? { env } : {});
      assert.equal(r.code, 0, `caravan ${args.join(' ')}: ${r.stdout}${r.stderr}`);
      return r.stdout;
    };

    assert.match(await ok(['namespace', 'apply', '-description', 'web team', 'web']), /Successfully applied namespace "web"!/);
    const spec = join(dir, 'ops.hcl');
    await writeFile(spec, 'name = "ops"\ndescription = "operations"\nmeta {\n  owner = "sre"\n}\ncapabilities {\n  disabled_task_drivers = ["docker"]\n}\n');
    assert.match(await ok(['namespace', 'apply', spec]), /Successfully applied namespace "ops"!/);

    const listed = JSON.parse(await ok(['namespace', 'list', '-json'])) as Namespace[];
    assert.deepEqual(listed.map((n) => n.Name), ['default', 'ops', 'web']);
    assert.match(await ok(['namespace', 'list']), /web\s+web team/);
    const status = await ok(['namespace', 'status', 'ops']);
    assert.match(status, /Description\s+= operations/);
    assert.match(status, /DisabledDrivers\s+= docker/);
    assert.match(status, /owner = sre/);
    const inspected = JSON.parse(await ok(['namespace', 'inspect', 'ops'])) as Namespace;
    assert.deepEqual(inspected.Meta, { owner: 'sre' });
    // apply by name again updates only what the flags give.
    await ok(['namespace', 'apply', '-description', 'ops team', 'ops']);
    assert.deepEqual((await api<Namespace>(a, 'GET', '/v1/namespace/ops')).body.Meta, { owner: 'sre' });

    // A job file lands in the namespace the flag (or NOMAD_NAMESPACE) names.
    const file = join(dir, 'sleeper.hcl');
    await writeFile(file, sleepJobHcl('sleeper'));
    await ok(['job', 'run', '-detach', '-namespace', 'web', file]);
    const inWeb = JSON.parse(await ok(['job', 'status', '-json'], { NOMAD_NAMESPACE: 'web' })) as { ID: string }[];
    assert.deepEqual(inWeb.map((j) => j.ID), ['sleeper']);
    assert.equal((await api(a, 'GET', '/v1/job/sleeper')).status, 404, 'not in default');
    const missing = await runCli(a, ['job', 'run', '-detach', '-namespace', 'nope', file]);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /nonexistent namespace "nope"/);

    const refused = await runCli(a, ['namespace', 'delete', 'web']);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /non-terminal jobs/);
    assert.match(await ok(['namespace', 'delete', 'ops']), /Successfully deleted namespace "ops"!/);
    assert.equal((await runCli(a, ['namespace', 'status', 'ops'])).code, 1);
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
});
