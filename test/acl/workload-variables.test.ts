import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Acl } from '../../src/acl/acl.js';
import { parsePolicy } from '../../src/acl/policy-parser.js';
import { implicitlyAllowed, jobAclApplies, workloadMayAccessVariable, type WorkloadClaim } from '../../src/acl/workload-variables.js';

const claim: WorkloadClaim = { namespace: 'default', job: 'web', group: 'g', task: 't' };

describe('workload identity access to variables', () => {
  it('grants read and list on the task’s own nomad/jobs paths in its namespace', () => {
    for (const p of ['nomad/jobs', 'nomad/jobs/web', 'nomad/jobs/web/g', 'nomad/jobs/web/g/t']) {
      assert.equal(implicitlyAllowed(claim, 'default', p, 'read'), true, p);
      assert.equal(implicitlyAllowed(claim, 'default', p, 'list'), true, p);
    }
  });

  it('refuses everything else: deeper paths, other jobs, other namespaces, partial segments, writes', () => {
    for (const [ns, p, op] of [
      ['default', 'nomad/jobs/web/g/t/deeper', 'read'],
      ['default', 'nomad/jobs/other', 'read'],
      ['default', 'nomad/jobs/web/other-group', 'read'],
      ['default', 'nomad/jobs/webx', 'read'],
      ['default', 'nomad/jobs/we', 'read'],
      ['default', 'app/config', 'read'],
      ['prod', 'nomad/jobs/web', 'read'],
      ['default', 'nomad/jobs/web', 'write'],
      ['default', 'nomad/jobs/web', 'destroy'],
    ] as const) {
      assert.equal(workloadMayAccessVariable(claim, null, ns, p, op), false, `${ns} ${p} ${op}`);
    }
  });

  it('adds what the policies attached to the job grant', async () => {
    const acl = Acl.compile([await parsePolicy('namespace "default" {\n  variables {\n    path "shared/*" {\n      capabilities = ["read"]\n    }\n  }\n}\n')]);
    assert.equal(workloadMayAccessVariable(claim, acl, 'default', 'shared/db', 'read'), true);
    assert.equal(workloadMayAccessVariable(claim, acl, 'default', 'other/db', 'read'), false);
    assert.equal(workloadMayAccessVariable(claim, acl, 'prod', 'shared/db', 'read'), false);
  });

  it('attaches a policy by its JobACL (empty group or task: all of them)', () => {
    assert.equal(jobAclApplies({ Namespace: 'default', JobID: 'web', Group: '', Task: '' }, claim), true);
    assert.equal(jobAclApplies({ Namespace: 'default', JobID: 'web', Group: 'g', Task: '' }, claim), true);
    assert.equal(jobAclApplies({ Namespace: 'default', JobID: 'web', Group: 'g', Task: 't' }, claim), true);
    assert.equal(jobAclApplies({ Namespace: 'default', JobID: 'web', Group: 'h', Task: '' }, claim), false);
    assert.equal(jobAclApplies({ Namespace: 'prod', JobID: 'web', Group: '', Task: '' }, claim), false);
    assert.equal(jobAclApplies({ Namespace: 'default', JobID: 'api', Group: '', Task: '' }, claim), false);
    assert.equal(jobAclApplies(null, claim), false);
  });
});
