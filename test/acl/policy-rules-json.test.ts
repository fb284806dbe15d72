import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy } from '../../src/acl/policy-parser.js';
import { policyRulesJson } from '../../src/acl/policy-rules-json.js';

const POLICY = `
namespace "*" {
  policy       = "write"
  capabilities = ["alloc-node-exec"]
}
namespace "secret" {
  policy = "deny"
}
namespace "apps" {
  policy = "read"
  variables {
    path "apps/*" {
      capabilities = ["read", "write"]
    }
  }
}
agent {
  policy = "read"
}
node {
  policy = "write"
}
`;

test("RulesJSON is Nomad's acl.Policy: namespaces with expanded capabilities, variables' paths, coarse rules", async () => {
  const json = policyRulesJson(await parsePolicy(POLICY));
  const star = json.Namespaces?.find((n) => n.Name === '*');
  assert.ok(star, 'the * namespace rule');
  // policy = "write" stands for its capabilities, as Nomad's Parse expands them.
  for (const cap of ['submit-job', 'read-logs', 'alloc-exec', 'alloc-node-exec']) assert.ok(star.Capabilities.includes(cap), cap);
  assert.ok(json.Namespaces?.find((n) => n.Name === 'secret')?.Capabilities.includes('deny'));
  const apps = json.Namespaces?.find((n) => n.Name === 'apps');
  assert.ok(apps?.Capabilities.includes('read-job') && !apps.Capabilities.includes('submit-job'));
  const path = apps?.Variables?.Paths.find((p) => p.PathSpec === 'apps/*');
  assert.ok(path?.Capabilities.includes('read') && path.Capabilities.includes('write'));
  assert.equal(star.Variables, null);
  assert.deepEqual(json.Agent, { Policy: 'read' });
  assert.deepEqual(json.Node, { Policy: 'write' });
  assert.equal(json.Quota, null);
});

test('a rule the policy does not have is null, as a nil pointer in Go', async () => {
  const json = policyRulesJson(await parsePolicy('node {\n  policy = "read"\n}\n'));
  assert.deepEqual(json.Node, { Policy: 'read' });
  assert.equal(json.Namespaces, null);
  assert.equal(json.HostVolumes, null);
  assert.equal(json.Agent, null);
  assert.equal(json.Operator, null);
});
