import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDeployment, formatDeploymentList } from '../../src/cli/commands/deployment-format.js';
import type { Deployment, DeploymentState } from '../../src/structs/index.js';

function group(over: Partial<DeploymentState> = {}): DeploymentState {
  return {
    AutoRevert: false, AutoPromote: false, ProgressDeadline: 600e9, RequireProgressBy: '2026-01-01T00:10:00.000Z', Promoted: false,
    PlacedCanaries: null, DesiredCanaries: 0, DesiredTotal: 3, PlacedAllocs: 2, HealthyAllocs: 1, UnhealthyAllocs: 0, ...over,
  };
}

function deployment(groups: Record<string, DeploymentState>): Deployment {
  return {
    ID: '0b23b149-aaaa-bbbb-cccc-000000000000', Namespace: 'default', JobID: 'web', JobVersion: 2, JobModifyIndex: 10, JobSpecModifyIndex: 10,
    JobCreateIndex: 5, IsMultiregion: false, TaskGroups: groups, Status: 'running', StatusDescription: 'Deployment is running', CreateIndex: 11, ModifyIndex: 12,
  };
}

test('deployment status: the key block and the Deployed table, canary columns only with canaries', () => {
  const plain = formatDeployment(deployment({ web: group() }));
  assert.equal(plain, [
    'ID          = 0b23b149',
    'Job ID      = web',
    'Job Version = 2',
    'Status      = running',
    'Description = Deployment is running',
    '',
    'Deployed',
    'Task Group  Desired  Placed  Healthy  Unhealthy  Progress Deadline',
    'web         3        2       1        0          2026-01-01T00:10:00Z',
  ].join('\n'));
  const canary = formatDeployment(deployment({ web: group({ DesiredCanaries: 1, AutoRevert: true }) }));
  assert.match(canary, /Task Group {2}Auto Revert {2}Promoted {2}Desired {2}Canaries {2}Placed/);
  assert.match(canary, /web {9}true {9}false {5}3 {8}1 {9}2/);
});

test('deployment list', () => {
  assert.equal(formatDeploymentList([]), 'No deployments found');
  assert.match(formatDeploymentList([deployment({})]), /^ID +Job ID +Job Version +Status +Description\n0b23b149 +web +2 +running +Deployment is running$/);
});
