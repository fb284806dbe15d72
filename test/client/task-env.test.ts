import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTaskEnv, interpolateTaskConfig, allocIndex } from '../../src/client/taskenv/task-env.js';
import { envDenylist, envDenylistProblem, hostEnvLookup } from '../../src/client/taskenv/host-env.js';
import { ClientErrorCode } from '../../src/client/client-error.js';
import { AllocDir } from '../../src/client/allocdir/alloc-dir.js';
import { mockAlloc, mockNode, mockTask } from '../mock/factories.js';
import { jobWith, testNode } from './harness.js';

test('task env: NOMAD_* variables, meta, ports and interpolation', () => {
  const task = mockTask({ Name: 'api', Meta: { Team: 'core' }, Env: { GREETING: 'hi ${NOMAD_TASK_NAME} on ${node.unique.name}', HOME_X: '${env.HOME_TEST}' } });
  const job = jobWith([task], { ParentID: 'parent' });
  const alloc = mockAlloc(job, mockNode(), { Name: 'web.web[3]' });
  alloc.AllocatedResources!.Shared.Ports = [{ Label: 'http', Value: 23456, To: 8080, HostIP: '10.0.0.5' }];
  const dirs = new AllocDir('/data', alloc.ID).taskDirs('api');
  const te = buildTaskEnv({ alloc, group: job.TaskGroups[0]!, task, node: testNode, dirs, hostEnv: hostEnvLookup({ HOME_TEST: '/home/x' }) });
  const e = te.env;
  assert.equal(e.NOMAD_ALLOC_ID, alloc.ID);
  assert.equal(e.NOMAD_SHORT_ALLOC_ID, alloc.ID.slice(0, 8));
  assert.equal(e.NOMAD_ALLOC_NAME, 'web.web[3]');
  assert.equal(e.NOMAD_ALLOC_INDEX, '3');
  assert.equal(e.NOMAD_JOB_ID, 'web');
  assert.equal(e.NOMAD_JOB_PARENT_ID, 'parent');
  assert.equal(e.NOMAD_GROUP_NAME, 'web');
  assert.equal(e.NOMAD_TASK_NAME, 'api');
  assert.equal(e.NOMAD_DC, 'dc1');
  assert.equal(e.NOMAD_REGION, 'global');
  assert.equal(e.NOMAD_NAMESPACE, 'default');
  assert.equal(e.NOMAD_ALLOC_DIR, `/data/alloc/${alloc.ID}/alloc`);
  assert.equal(e.NOMAD_TASK_DIR, `/data/alloc/${alloc.ID}/api/local`);
  assert.equal(e.NOMAD_SECRETS_DIR, `/data/alloc/${alloc.ID}/api/secrets`);
  assert.equal(e.NOMAD_CPU_LIMIT, '500');
  assert.equal(e.NOMAD_MEMORY_LIMIT, '256');
  assert.equal(e.NOMAD_META_TEAM, 'core');
  assert.equal(e.NOMAD_META_Team, 'core');
  assert.equal(e.NOMAD_META_OWNER, 'caravan');
  assert.equal(e.NOMAD_PORT_http, '8080');
  assert.equal(e.NOMAD_HOST_PORT_http, '23456');
  assert.equal(e.NOMAD_IP_http, '10.0.0.5');
  assert.equal(e.NOMAD_ADDR_http, '10.0.0.5:23456');
  assert.equal(e.GREETING, 'hi api on node-1');
  assert.equal(e.HOME_X, '/home/x');

  const cfg = interpolateTaskConfig(
    { command: '/bin/echo', args: ['${NOMAD_ALLOC_INDEX}', '${node.datacenter}', '${attr.kernel.name}', '${meta.rack}', '${node.class}', '${node.unique.id}', '${unknown.thing}'], nested: { x: '${NOMAD_META_TEAM}' } },
    te,
  );
  assert.deepEqual(cfg, {
    command: '/bin/echo',
    args: ['3', 'dc1', 'linux', 'r1', 'linux-small', testNode.id, '${unknown.thing}'],
    nested: { x: 'core' },
  });
  assert.equal(allocIndex('x.y[12]'), 12);
});

test("task env: the agent's environment is looked up by name, never copied per task", () => {
  // process.env reads through to the C environment on every access: enumerating it for each
  // task was ~0.3 ms a task in the node simulator. A proxy that refuses enumeration stands in.
  const reads: string[] = [];
  const hostEnv = new Proxy({ HOME_TEST: '/home/x', TASK_WINS: 'host' } as Record<string, string | undefined>, {
    ownKeys() {
      throw new Error('the agent environment was enumerated');
    },
    get(target, key) {
      if (typeof key === 'string') reads.push(key);
      return target[key as string];
    },
  });
  const task = mockTask({ Name: 'api', Env: { HOME_X: '${env.HOME_TEST}', BARE: '${HOME_TEST}', TASK_WINS: 'task', AFTER: '${TASK_WINS}', ID: '${NOMAD_ALLOC_ID}', UNKNOWN: '${env.NOT_SET_ANYWHERE}', PROTO: '${toString}' } });
  const job = jobWith([task]);
  const alloc = mockAlloc(job, mockNode());
  const dirs = new AllocDir('/data', alloc.ID).taskDirs('api');
  const te = buildTaskEnv({ alloc, group: job.TaskGroups[0]!, task, node: testNode, dirs, hostEnv: hostEnvLookup(hostEnv) });
  assert.equal(te.env.HOME_X, '/home/x');
  assert.equal(te.env.BARE, '/home/x');
  assert.equal(te.env.AFTER, 'task', "the task's own env wins over the agent's");
  assert.equal(te.env.ID, alloc.ID);
  assert.equal(te.env.UNKNOWN, '${env.NOT_SET_ANYWHERE}', 'an unknown variable is left as written');
  assert.equal(te.env.PROTO, '${toString}', 'an object method is no variable');
  assert.equal(te.env.HOME_TEST, undefined, "the agent's environment is not the task's");
  assert.ok(!reads.includes('TASK_WINS'), 'a variable the task sets is not read from the agent');
  assert.equal(interpolateTaskConfig({ args: ['${env.HOME_TEST}'] }, te).args instanceof Array, true);
  assert.deepEqual(interpolateTaskConfig({ args: ['${env.HOME_TEST}'] }, te), { args: ['/home/x'] });
});

test("task env: the agent's env.denylist variables (its own credentials) are never interpolated", () => {
  const hostEnv: Record<string, string | undefined> = { VAULT_TOKEN: 'agent-vault', CONSUL_HTTP_TOKEN: 'agent-consul', AWS_SECRET_ACCESS_KEY: 'agent-aws', HOME_TEST: '/home/x' };
  const task = mockTask({ Name: 'api', Env: { V: '${env.VAULT_TOKEN}', C: '${CONSUL_HTTP_TOKEN}', H: '${env.HOME_TEST}', OWN: 'task-set', VAULT_TOKEN: 'the-task-s-own' } });
  const job = jobWith([task]);
  const alloc = mockAlloc(job, mockNode());
  const dirs = new AllocDir('/data', alloc.ID).taskDirs('api');
  const te = buildTaskEnv({ alloc, group: job.TaskGroups[0]!, task, node: testNode, dirs, hostEnv: hostEnvLookup(hostEnv) });
  assert.equal(te.env.V, '${env.VAULT_TOKEN}', 'a denied variable is left as written');
  assert.equal(te.env.C, '${CONSUL_HTTP_TOKEN}');
  assert.equal(te.env.H, '/home/x', 'other agent variables still resolve');
  assert.deepEqual(interpolateTaskConfig({ args: ['${env.AWS_SECRET_ACCESS_KEY}', '${VAULT_TOKEN}'] }, te), { args: ['${env.AWS_SECRET_ACCESS_KEY}', 'the-task-s-own'] }, "the task's own variable of that name is its own to use");
});

test('task env: the client option env.denylist replaces the default list, as Nomad reads it', () => {
  const agent: Record<string, string | undefined> = { VAULT_TOKEN: 'agent-vault', SITE_SECRET: 'site', OTHER_SECRET: 'other', HOME_TEST: '/home/x' };
  const lookup = (options: Record<string, string>) => hostEnvLookup(agent, envDenylist(options));
  // Unset: Nomad's default list.
  assert.equal(lookup({})('VAULT_TOKEN'), undefined);
  assert.equal(lookup({})('SITE_SECRET'), 'site');
  // Set: the list named, and only it (the default no longer applies); entries are trimmed.
  const custom = lookup({ 'env.denylist': ' SITE_SECRET , OTHER_SECRET,' });
  assert.equal(custom('SITE_SECRET'), undefined);
  assert.equal(custom('OTHER_SECRET'), undefined);
  assert.equal(custom('VAULT_TOKEN'), 'agent-vault', 'a configured list replaces the default, as in Nomad');
  assert.equal(custom('HOME_TEST'), '/home/x');
  // The old name, read only when the new one is unset.
  assert.equal(lookup({ 'env.blacklist': 'SITE_SECRET' })('SITE_SECRET'), undefined);
  assert.equal(lookup({ 'env.denylist': 'OTHER_SECRET', 'env.blacklist': 'SITE_SECRET' })('SITE_SECRET'), 'site');
  // An empty list hides nothing.
  assert.equal(lookup({ 'env.denylist': '' })('VAULT_TOKEN'), 'agent-vault');

  // Through the task env: a denied name is left as written.
  const task = mockTask({ Name: 'api', Env: { S: '${env.SITE_SECRET}', V: '${VAULT_TOKEN}' } });
  const job = jobWith([task]);
  const alloc = mockAlloc(job, mockNode());
  const dirs = new AllocDir('/data', alloc.ID).taskDirs('api');
  const te = buildTaskEnv({ alloc, group: job.TaskGroups[0]!, task, node: testNode, dirs, hostEnv: custom });
  assert.equal(te.env.S, '${env.SITE_SECRET}');
  assert.equal(te.env.V, 'agent-vault');
});

test('task env: an env.denylist entry that is no variable name is refused, naming the option', () => {
  for (const [options, option, bad] of [
    [{ 'env.denylist': 'SITE_SECRET OTHER_SECRET' }, 'env.denylist', 'SITE_SECRET OTHER_SECRET'],
    [{ 'env.denylist': 'A,B=1' }, 'env.denylist', 'B=1'],
    [{ 'env.blacklist': 'A,B\0C' }, 'env.blacklist', 'B\0C'],
  ] as const) {
    const problem = envDenylistProblem(options);
    assert.ok(problem, JSON.stringify(options));
    assert.equal(problem[0], option);
    assert.match(problem[1], new RegExp(JSON.stringify(bad).replace(/[\\^$.*+?()[\]{}|]/g, '\\$&')));
    assert.throws(
      () => envDenylist(options),
      (err: Error & { code?: string }) => err.code === ClientErrorCode.OptionInvalid && err.message.includes(`"${option}"`),
    );
  }
  assert.equal(envDenylistProblem({ 'env.denylist': 'A, B,,C' }), null);
  assert.equal(envDenylistProblem({}), null);
});
