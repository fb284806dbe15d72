import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTaskEnv, interpolateTaskConfig, allocIndex } from '../../src/client/taskenv/task-env.js';
import { AllocDir } from '../../src/client/allocdir/alloc-dir.js';
import { mockAlloc, mockNode, mockTask } from '../mock/factories.js';
import { jobWith, testNode } from './harness.js';

test('task env: NOMAD_* variables, meta, ports and interpolation', () => {
  const task = mockTask({ Name: 'api', Meta: { Team: 'core' }, Env: { GREETING: 'hi ${NOMAD_TASK_NAME} on ${node.unique.name}', HOME_X: '${env.HOME_TEST}' } });
  const job = jobWith([task], { ParentID: 'parent' });
  const alloc = mockAlloc(job, mockNode(), { Name: 'web.web[3]' });
  alloc.AllocatedResources!.Shared.Ports = [{ Label: 'http', Value: 23456, To: 8080, HostIP: '10.0.0.5' }];
  const dirs = new AllocDir('/data', alloc.ID).taskDirs('api');
  const te = buildTaskEnv({ alloc, group: job.TaskGroups[0]!, task, node: testNode, dirs, hostEnv: { HOME_TEST: '/home/x' } });
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
