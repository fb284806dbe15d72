/**
 * Constructs of Nomad's own job files (its command/asset examples, e2e inputs and jobspec
 * fixtures) that Caravan refused, each with a fixture of our own: the parse result is checked
 * field by field, and what Caravan keeps but does not run is refused at registration by name.
 * Where Nomad's jobspec2/parse_test.go states a result, the same result is expected here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { validateJob } from '../../src/structs/job-validate.js';
import { admitJob } from '../../src/server/job-admission.js';

const fixture = (name: string): string => readFileSync(join(import.meta.dirname, '../../../test/fixtures/jobspec', name), 'utf8');
const NS_PER_HOUR = 3_600_000_000_000;

test('a stateful group: count from scaling min, the policy kept, host volume and mount, identities, a once template', async () => {
  const job = canonicalizeJob(await parseJobspec(fixture('stateful-scaled.hcl')));
  const [db, api] = job.TaskGroups;
  assert.equal(db!.Count, 2, 'no count: the scaling block\'s min, as Nomad');
  assert.equal(api!.Count, 3);
  assert.equal(api!.Scaling, null);
  assert.deepEqual(
    { Min: db!.Scaling!.Min, Max: db!.Scaling!.Max, Type: db!.Scaling!.Type, Enabled: db!.Scaling!.Enabled, Policy: db!.Scaling!.Policy },
    { Min: 2, Max: 5, Type: 'horizontal', Enabled: true, Policy: { cooldown: '1m' } },
  );
  const vol = db!.Volumes!['data']!;
  assert.deepEqual([vol.Type, vol.Source, vol.ReadOnly, vol.PerAlloc], ['host', 'ledger-data', false, true]);
  const store = db!.Tasks[0]!;
  assert.deepEqual(
    store.VolumeMounts!.map((m) => [m.Volume, m.Destination, m.ReadOnly, m.PropagationMode]),
    [['data', '/var/lib/ledger', false, 'private']],
  );
  assert.deepEqual([store.Identity!.Name, store.Identity!.Env, store.Identity!.File], ['default', true, true]);
  const backup = store.Identities!.find((i) => i.Name === 'backup')!;
  assert.deepEqual([backup.Audience, backup.TTL, backup.ChangeMode, backup.ChangeSignal], [['backup.example'], NS_PER_HOUR, 'signal', 'SIGHUP']);
  assert.equal(store.Templates![0]!.Once, true);
  assert.deepEqual(validateJob(job), []);
});

test('kept but not run: multiregion, a group vault, task scaling and secrets parse in Nomad\'s shapes', async () => {
  const job = canonicalizeJob(await parseJobspec(fixture('kept-not-run.hcl')));
  assert.deepEqual([job.ID, job.Name], ['billing-eu', 'billing'], 'id from the attribute, name from the label (Nomad\'s normalizeJob)');
  assert.deepEqual(job.Multiregion, {
    Strategy: { MaxParallel: 1, OnFailure: 'fail_all' },
    Regions: [{ Name: 'eu', Count: 2, Datacenters: ['eu-1'] }],
  });
  const [invoice, ledger] = job.TaskGroups[0]!.Tasks;
  assert.deepEqual(invoice!.Vault, { Policies: ['billing'] }, 'the group\'s vault reaches a task without one');
  assert.deepEqual(ledger!.Vault, { Policies: ['ledger'] }, 'a task keeps its own');
  assert.deepEqual(
    invoice!.ScalingPolicies!.map((p) => [p.Type, p.Min, p.Max]),
    [['vertical_cpu', 0, 2000], ['vertical_mem', 128, 1024]],
  );
  assert.deepEqual(invoice!.Secrets, [{ Name: 'stripe', Provider: 'nomad', Path: 'billing/stripe', Config: { namespace: 'default' }, Env: null }]);
  const problems = validateJob(job).map((p) => `${p.path}: ${p.message}`);
  const expect = [
    'job "billing-eu": multiregion: multiregion deployments (Nomad Enterprise) are not supported by Caravan',
    'job "billing-eu": group "workers": task "invoice": vault: Vault is not supported by Caravan',
    'job "billing-eu": group "workers": task "invoice": secret "stripe": secret blocks (Nomad secret providers) are not supported by Caravan',
    'job "billing-eu": group "workers": task "invoice": scaling "cpu": task scaling policies (Nomad Enterprise dynamic application sizing) are not supported by Caravan',
    'job "billing-eu": group "workers": task "invoice": scaling "mem": task scaling policies',
    'job "billing-eu": group "workers": task "ledger": vault: Vault is not supported by Caravan',
  ];
  for (const e of expect) assert.ok(problems.some((p) => p.startsWith(e)), `${e}\nin:\n${problems.join('\n')}`);
});

test('task scaling blocks are checked as jobspec2 does: label cpu or mem, once each, type matching the label', async () => {
  const task = (body: string): string => `job "j" {\n  group "g" {\n    task "t" {\n      driver = "exec"\n${body}\n    }\n  }\n}`;
  await assert.rejects(parseJobspec(task('scaling "gpu" { max = 1 }')), /scaling "gpu": scaling policy name must be "cpu" or "mem"/);
  await assert.rejects(parseJobspec(task('scaling "cpu" { max = 1 }\nscaling "cpu" { max = 2 }')), /duplicate scaling "cpu"/);
  await assert.rejects(parseJobspec(task('scaling "mem" {\n max = 1\n type = "vertical_cpu"\n}')), /invalid policy type, expected "vertical_mem" but found "vertical_cpu"/);
});

test('constraint shorthands equal their operator/value form (jobspec2 TestParse_Constraint_Alternatives)', async () => {
  const src = (c: string): string => `job "j" {\n  ${c}\n  group "g" {\n    task "t" {\n      driver = "exec"\n    }\n  }\n}`;
  const constraints = async (c: string) => (await parseJobspec(src(c))).Constraints;
  assert.deepEqual(await constraints('constraint {\n distinct_hosts = true\n}'), await constraints('constraint {\n operator = "distinct_hosts"\n value = "true"\n}'));
  assert.deepEqual(await constraints('constraint {\n distinct_hosts = false\n}'), [{ LTarget: '', RTarget: 'false', Operand: 'distinct_hosts' }]);
  assert.deepEqual(await constraints('constraint {\n distinct_property = "${meta.rack}"\n value = "1"\n}'), [{ LTarget: '${meta.rack}', RTarget: '1', Operand: 'distinct_property' }]);
});

test('env and meta as attributes, and an unquoted runtime reference, as jobspec2 parses them', async () => {
  const draft = await parseJobspec(`job "j" {
  region = meta.mytest
  meta = { source = "job" }
  group "g" {
    task "t" {
      driver = "exec"
      env = { "key.dot" : "val1", key_unquoted_without_dot : "val2" }
    }
  }
}`);
  assert.equal(draft.Region, '${meta.mytest}');
  assert.deepEqual(draft.Meta, { source: 'job' });
  assert.deepEqual(draft.TaskGroups![0]!.Tasks![0]!.Env, { 'key.dot': 'val1', key_unquoted_without_dot: 'val2' });
});

test('free-form maps inside kept connect blocks keep their keys (jobspec2 TestParse_ConnectJob)', async () => {
  const job = canonicalizeJob(await parseJobspec(fixture('connect-upstream-config.hcl')));
  const sidecar = (job.TaskGroups[0]!.Services![0] as unknown as { Connect: { SidecarService: Record<string, unknown> & { Proxy: { Upstreams: Record<string, unknown> } } } }).Connect.SidecarService;
  assert.deepEqual(sidecar.Proxy.Upstreams, { DestinationName: 'inventory', LocalBindPort: 9191, Config: { connect_timeout_ms: 2500 } });
  assert.deepEqual(sidecar.Meta, { 'team-name': 'checkout' });
  assert.ok(validateJob(job).some((p) => p.message === 'Consul Connect is not supported by Caravan'));
});

test('API JSON: the kept blocks are refused by name, and a malformed one is a decoding error naming it, never a crash', () => {
  const job = (task: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    ID: 'api', Name: 'api', ...extra,
    TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/true' }, ...task }] }],
  });
  assert.throws(() => admitJob(job({ Secrets: [{ Name: 's', Provider: 'nomad', Path: 'a' }] }), { region: 'global' }), /task "t": secret "s": secret blocks .* not supported by Caravan/);
  assert.throws(() => admitJob(job({}, { Multiregion: { Regions: [{ Name: 'eu' }] } }), { region: 'global' }), /multiregion: multiregion deployments .* not supported/);
  assert.throws(() => admitJob(job({ Secrets: [null] }), { region: 'global' }), /task "t": Secrets\[0\] must be an object/);
  assert.throws(() => admitJob(job({ ScalingPolicies: 5 }), { region: 'global' }), /ScalingPolicies must be a list, got 5/);
  assert.throws(() => admitJob(job({ Secrets: [{ Name: 's', Path: 3 }] }), { region: 'global' }), /Secrets\[0\]: Path must be a string, got 3/);
  assert.throws(() => admitJob(job({}, { Multiregion: 'eu' }), { region: 'global' }), /Multiregion must be an object/);
});
