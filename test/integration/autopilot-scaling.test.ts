/**
 * Autopilot and scaling policies through a real server agent, the endpoints Nomad's clients
 * call (`nomad operator autopilot get-config|set-config|health`, `Scaling().ListPolicies`,
 * `GetPolicy`) and the caravan commands that mirror them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, runCli, startAgent } from './helpers/agent-process.js';

interface AutopilotJson {
  CleanupDeadServers: boolean;
  LastContactThreshold: string;
  MaxTrailingLogs: number;
  MinQuorum: number;
  ServerStabilizationTime: string;
  EnableRedundancyZones: boolean;
  ModifyIndex: number;
}

const PATH = '/v1/operator/autopilot/configuration';

test('autopilot configuration: Nomad defaults, replaced whole, check-and-set, bad input refused by name', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    const initial = await api<AutopilotJson>(a, 'GET', PATH);
    assert.equal(initial.status, 200, initial.text);
    const { CreateIndex: _c, ModifyIndex: _m, ...fields } = initial.body as AutopilotJson & { CreateIndex: number };
    assert.deepEqual(fields, {
      CleanupDeadServers: true,
      LastContactThreshold: '200ms',
      MaxTrailingLogs: 250,
      MinQuorum: 0,
      ServerStabilizationTime: '10s',
      EnableRedundancyZones: false,
      DisableUpgradeMigration: false,
      EnableCustomUpgrades: false,
    });

    // A plain PUT answers true and replaces the whole configuration.
    const put = await api<boolean>(a, 'PUT', PATH, { ...initial.body, MaxTrailingLogs: 100, LastContactThreshold: '1s' });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body, true);
    const after = (await api<AutopilotJson>(a, 'GET', PATH)).body;
    assert.equal(after.MaxTrailingLogs, 100);
    assert.equal(after.LastContactThreshold, '1s');
    assert.equal(after.ServerStabilizationTime, '10s');
    assert.ok(after.ModifyIndex > 0);

    // Check-and-set: a stale index answers false and changes nothing; the current one applies.
    const stale = await api<boolean>(a, 'PUT', `${PATH}?cas=${after.ModifyIndex - 1}`, { ...after, MinQuorum: 3 });
    assert.equal(stale.status, 200, stale.text);
    assert.equal(stale.body, false);
    assert.equal((await api<AutopilotJson>(a, 'GET', PATH)).body.MinQuorum, 0);
    const cas = await api<boolean>(a, 'PUT', `${PATH}?cas=${after.ModifyIndex}`, { ...after, MinQuorum: 3 });
    assert.equal(cas.body, true);
    assert.equal((await api<AutopilotJson>(a, 'GET', PATH)).body.MinQuorum, 3);

    for (const [body, field] of [
      [{ LastContactThreshold: 'soon' }, 'LastContactThreshold'],
      [{ MaxTrailingLogs: -1 }, 'MaxTrailingLogs'],
      [{ CleanupDeadServers: 'yes' }, 'CleanupDeadServers'],
    ] as const) {
      const bad = await api(a, 'PUT', PATH, body);
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.text, new RegExp(`Error parsing autopilot config: ${field}`));
    }
    const badCas = await api(a, 'PUT', `${PATH}?cas=x`, {});
    assert.equal(badCas.status, 400);
    assert.equal((await api<AutopilotJson>(a, 'GET', PATH)).body.MinQuorum, 3, 'a refused PUT changes nothing');

    // The CLI: get-config prints it, set-config changes only the flags given.
    const get = await runCli(a, ['operator', 'autopilot', 'get-config']);
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, /^CleanupDeadServers = true$/m);
    assert.match(get.stdout, /^LastContactThreshold = 1s$/m);
    assert.match(get.stdout, /^MinQuorum = 3$/m);
    const set = await runCli(a, ['operator', 'autopilot', 'set-config', '-cleanup-dead-servers=false', '-server-stabilization-time=30s']);
    assert.equal(set.code, 0, set.stderr);
    assert.match(set.stdout, /Configuration updated!/);
    const now = (await api<AutopilotJson>(a, 'GET', PATH)).body;
    assert.equal(now.CleanupDeadServers, false);
    assert.equal(now.ServerStabilizationTime, '30s');
    assert.equal(now.MaxTrailingLogs, 100, 'flags not given keep their value');
    const badFlag = await runCli(a, ['operator', 'autopilot', 'set-config', '-last-contact-threshold=soon']);
    assert.notEqual(badFlag.code, 0);
    assert.match(badFlag.stderr, /last-contact-threshold/);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('autopilot configuration survives a restart of the server (replicated state)', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  let restarted: Awaited<ReturnType<typeof startAgent>> | undefined;
  try {
    assert.equal((await api<boolean>(agent.address, 'PUT', PATH, { CleanupDeadServers: true, LastContactThreshold: '2s', MaxTrailingLogs: 7, ServerStabilizationTime: '5s' })).body, true);
    await agent.stop();
    restarted = await startAgent({ roleArgs: ['-server'], dataDir: agent.dataDir, port: agent.port });
    const c = (await api<AutopilotJson>(restarted.address, 'GET', PATH)).body;
    assert.equal(c.MaxTrailingLogs, 7);
    assert.equal(c.LastContactThreshold, '2s');
  } finally {
    await (restarted ?? agent).stop();
    await agent.cleanup();
  }
});

interface HealthReply {
  Healthy: boolean;
  FailureTolerance: number;
  Leader: string;
  Voters: string[];
  Servers: { ID: string; Name: string; Address: string; SerfStatus: string; Leader: boolean; Voter: boolean; Healthy: boolean; LastContact: string; LastIndex: number; StableSince: string }[];
}

test('autopilot health reports the server with Nomad\'s fields; the CLI prints it', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const h = await api<HealthReply>(agent.address, 'GET', '/v1/operator/autopilot/health');
    assert.equal(h.status, 200, h.text);
    assert.equal(h.body.Healthy, true);
    assert.equal(h.body.FailureTolerance, 0);
    assert.equal(h.body.Servers.length, 1);
    const s = h.body.Servers[0]!;
    assert.equal(s.Leader, true);
    assert.equal(s.SerfStatus, 'alive');
    assert.equal(s.Healthy, true);
    assert.equal(s.Voter, true);
    assert.equal(s.Address, `127.0.0.1:${agent.port}`);
    assert.equal(s.LastContact, '0s');
    assert.equal(typeof s.LastIndex, 'number');
    assert.match(s.StableSince, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.equal(h.body.Leader, s.ID);
    assert.deepEqual(h.body.Voters, [s.ID]);

    const cli = await runCli(agent.address, ['operator', 'autopilot', 'health']);
    assert.equal(cli.code, 0, cli.stderr);
    assert.match(cli.stdout, /^Healthy: true$/m);
    assert.match(cli.stdout, /^ID\s+Name\s+Address\s+SerfStatus\s+Version\s+Leader\s+Voter\s+Healthy\s+LastContact\s+LastTerm\s+LastIndex\s+StableSince$/m);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

const scaledJob = (id: string, scaling: string, count = ''): string => `job "${id}" {
  group "web" {
    ${count}
    scaling {
${scaling}
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["600"]
      }
    }
  }
}
`;

interface Stub {
  ID: string;
  Enabled: boolean;
  Type: string;
  Target: Record<string, string>;
  CreateIndex: number;
  ModifyIndex: number;
}

async function register(a: string, hcl: string): Promise<{ status: number; text: string; job?: { TaskGroups: { Count: number; Scaling: unknown }[] } }> {
  const parsed = await api<{ TaskGroups: { Count: number; Scaling: unknown }[] }>(a, 'POST', '/v1/jobs/parse', { JobHCL: hcl, Canonicalize: true });
  if (parsed.status !== 200) return { status: parsed.status, text: parsed.text };
  const reg = await api(a, 'PUT', '/v1/jobs', { Job: parsed.body });
  return { status: reg.status, text: reg.text, job: parsed.body };
}

test('scaling policies: from the groups\' scaling blocks, count from min, IDs kept across versions, stopped jobs disabled', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    // Issue 31: `scaling { min = 2 }` without count gives count 2, and the block is kept.
    const web = await register(a, scaledJob('web', '      min = 2\n      max = 6\n      policy {\n        cooldown = "1m"\n      }'));
    assert.equal(web.status, 200, web.text);
    assert.equal(web.job!.TaskGroups[0]!.Count, 2);
    const stored = await api<{ TaskGroups: { Count: number; Scaling: { Min: number; Max: number; Enabled: boolean; Type: string; ID: string; Policy: Record<string, unknown> } }[] }>(a, 'GET', '/v1/job/web');
    const sc = stored.body.TaskGroups[0]!.Scaling;
    assert.equal(stored.body.TaskGroups[0]!.Count, 2);
    assert.deepEqual([sc.Min, sc.Max, sc.Enabled, sc.Type, sc.Policy], [2, 6, true, 'horizontal', { cooldown: '1m' }]);
    assert.equal(sc.ID.length, 36);

    // An explicit count wins over min, and a count outside [min, max] is refused by name.
    const other = await register(a, scaledJob('api', '      min = 1\n      max = 3\n      enabled = false', 'count = 3'));
    assert.equal(other.status, 200, other.text);
    const tooMany = await register(a, scaledJob('bad', '      min = 1\n      max = 3', 'count = 5'));
    assert.equal(tooMany.status, 400);
    assert.match(tooMany.text, /scaling: task group count must not be greater than maximum count in scaling policy/);
    const noMax = await register(a, scaledJob('bad', '      min = 1'));
    assert.equal(noMax.status, 400);
    assert.match(noMax.text, /maximum count must be specified and non-negative/);

    const list = await api<Stub[]>(a, 'GET', '/v1/scaling/policies');
    assert.equal(list.status, 200, list.text);
    assert.ok(list.index > 0);
    assert.deepEqual(list.body.map((p) => [p.Target['Job'], p.Enabled, p.Type]).sort(), [['api', false, 'horizontal'], ['web', true, 'horizontal']]);
    const webPolicy = list.body.find((p) => p.Target['Job'] === 'web')!;
    assert.equal(webPolicy.ID, sc.ID);
    assert.deepEqual(webPolicy.Target, { Namespace: 'default', Job: 'web', Group: 'web' });
    assert.deepEqual(Object.keys(webPolicy).sort(), ['CreateIndex', 'Enabled', 'ID', 'ModifyIndex', 'Target', 'Type']);

    assert.deepEqual((await api<Stub[]>(a, 'GET', '/v1/scaling/policies?job=web')).body.map((p) => p.ID), [sc.ID]);
    assert.deepEqual((await api<Stub[]>(a, 'GET', '/v1/scaling/policies?type=vertical')).body, []);
    assert.equal((await api<Stub[]>(a, 'GET', '/v1/scaling/policies?type=horizontal')).body.length, 2);

    const one = await api<{ ID: string; Min: number; Max: number; Policy: unknown; ModifyIndex: number }>(a, 'GET', `/v1/scaling/policy/${sc.ID}`);
    assert.equal(one.status, 200, one.text);
    assert.deepEqual([one.body.Min, one.body.Max, one.body.Policy], [2, 6, { cooldown: '1m' }]);
    assert.equal(one.index, one.body.ModifyIndex);
    const missing = await api(a, 'GET', '/v1/scaling/policy/00000000-0000-0000-0000-000000000000');
    assert.equal(missing.status, 404);
    assert.equal(missing.text, 'policy not found');

    // A new version of the job keeps the policy's ID; job scale is bounded by it.
    const v2 = await register(a, scaledJob('web', '      min = 2\n      max = 8'));
    assert.equal(v2.status, 200, v2.text);
    const after = await api<{ ID: string; Max: number; CreateIndex: number; ModifyIndex: number }>(a, 'GET', `/v1/scaling/policy/${sc.ID}`);
    assert.equal(after.status, 200, after.text);
    assert.equal(after.body.Max, 8);
    assert.equal(after.body.CreateIndex, webPolicy.CreateIndex);
    assert.ok(after.body.ModifyIndex > webPolicy.ModifyIndex);
    const scale = await api(a, 'POST', '/v1/job/web/scale', { Count: 9, Target: { Group: 'web' } });
    assert.equal(scale.status, 400);
    assert.match(scale.text, /greater than scaling policy maximum/);

    // The CLI lists and shows them (info by a prefix of the ID).
    const cliList = await runCli(a, ['scaling', 'policy', 'list']);
    assert.equal(cliList.code, 0, cliList.stderr);
    assert.match(cliList.stdout, /^ID\s+Enabled\s+Type\s+Target$/m);
    assert.match(cliList.stdout, new RegExp(`^${sc.ID}\\s+true\\s+horizontal\\s+Namespace:default,Job:web,Group:web$`, 'm'));
    const cliInfo = await runCli(a, ['scaling', 'policy', 'info', sc.ID.slice(0, 8)]);
    assert.equal(cliInfo.code, 0, cliInfo.stderr);
    assert.match(cliInfo.stdout, /^Max\s+= 8$/m);

    // Stopping the job disables its policy; purging it removes it.
    assert.equal((await api(a, 'DELETE', '/v1/job/web')).status, 200);
    const stopped = await api<{ Enabled: boolean }>(a, 'GET', `/v1/scaling/policy/${sc.ID}`);
    assert.equal(stopped.body.Enabled, false);
    assert.equal((await api(a, 'DELETE', '/v1/job/web?purge=true')).status, 200);
    assert.equal((await api(a, 'GET', `/v1/scaling/policy/${sc.ID}`)).status, 404);
    assert.deepEqual((await api<Stub[]>(a, 'GET', '/v1/scaling/policies?job=web')).body, []);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});

test('scaling policies block until a job brings one', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    // A job without a policy first, so the list's index is a real one (not the floor of 1).
    const plain = await api<{ TaskGroups: unknown[] }>(a, 'POST', '/v1/jobs/parse', { JobHCL: scaledJob('plain', '      min = 1\n      max = 1').replace(/scaling \{[^}]*\}/, ''), Canonicalize: true });
    assert.equal((await api(a, 'PUT', '/v1/jobs', { Job: plain.body })).status, 200);
    const first = await api<Stub[]>(a, 'GET', '/v1/scaling/policies');
    assert.deepEqual(first.body, []);
    const waiting = api<Stub[]>(a, 'GET', `/v1/scaling/policies?index=${first.index}&wait=20s`);
    const reg = await register(a, scaledJob('late', '      min = 1\n      max = 2'));
    assert.equal(reg.status, 200, reg.text);
    const answered = await waiting;
    assert.equal(answered.body.length, 1);
    assert.ok(answered.index > first.index);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
