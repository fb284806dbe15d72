import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePolicy, PolicyParseError } from '../../src/acl/policy-parser.js';
import { Acl } from '../../src/acl/acl.js';

/** The sample policy of issue 12: every rule block of Nomad's language. */
export const SAMPLE_POLICY = `
namespace "*" {
  policy       = "write"
  capabilities = ["alloc-node-exec", "read-job"]
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
operator {
  policy = "write"
}
quota {
  policy = "read"
}
node {
  policy = "read"
}
host_volume "shared-*" {
  policy = "write"
}
plugin {
  policy = "list"
}
`;

test('the sample policy with every rule block parses and compiles', async () => {
  const rules = await parsePolicy(SAMPLE_POLICY);
  assert.equal(rules.namespaces.length, 3);
  assert.equal(rules.agent, 'read');
  assert.equal(rules.operator, 'write');
  assert.equal(rules.plugin, 'list');
  const acl = Acl.compile([rules]);
  assert.ok(acl.allowNamespaceOperation('default', 'submit-job'));
  assert.ok(acl.allowNamespaceOperation('prod', 'alloc-node-exec'));
  assert.ok(!acl.allowNamespaceOperation('secret', 'read-job'), 'deny wins in its namespace');
  assert.ok(acl.allowNamespaceOperation('apps', 'read-job'));
  assert.ok(!acl.allowNamespaceOperation('apps', 'submit-job'), 'the exact namespace rule beats the glob');
  assert.ok(acl.allowVariableOperation('apps', 'apps/web', 'write'));
  assert.ok(acl.allowVariableOperation('apps', 'apps/web', 'list'), 'read implies list');
  assert.ok(!acl.allowVariableOperation('apps', 'other', 'read'));
  assert.ok(acl.allowAgentRead() && !acl.allowAgentWrite());
  assert.ok(acl.allowOperatorWrite() && acl.allowNodeRead() && !acl.allowNodeWrite());
  assert.ok(acl.allowHostVolumeOperation('shared-data', 'mount-readwrite'));
  assert.ok(!acl.allowHostVolumeOperation('private', 'mount-readonly'));
  assert.ok(acl.allowPluginList() && !acl.allowPluginRead());
});

test('the JSON form of a policy parses like its HCL', async () => {
  const rules = await parsePolicy(JSON.stringify({ namespace: { default: { policy: 'read' } }, node: { policy: 'write' } }));
  const acl = Acl.compile([rules]);
  assert.ok(acl.allowNamespaceOperation('default', 'list-jobs'));
  assert.ok(!acl.allowNamespaceOperation('default', 'submit-job'));
  assert.ok(acl.allowNodeWrite());
});

test('malformed policies are refused naming the rule, the capability and the line', async () => {
  const cases: [string, RegExp][] = [
    ['namespace "default" {\n  policy = "read"\n  capabilities = ["read-job", "launch-rockets"]\n}', /namespace "default": unknown capability "launch-rockets" \(line 3\)/],
    ['namespace "default" {\n  policy = "admin"\n}', /namespace "default": invalid policy "admin" \(line 2\)/],
    ['node {\n  policy = "scale"\n}', /node: invalid policy "scale"/],
    ['namespace "default" {\n  policy = \n}', /line 2/],
    ['nomad "x" {\n  policy = "read"\n}', /unknown rule "nomad" \(line 1\)/],
    ['namespace "bad name!" { policy = "read" }', /Invalid namespace name "bad name!"/],
    ['namespace "default" {\n  polcy = "read"\n}', /unknown attribute or block "polcy" \(line 2\)/],
    ['', /no rules/],
    ['{"namespace": ', /invalid JSON/],
  ];
  for (const [src, want] of cases) {
    await assert.rejects(parsePolicy(src), (err: unknown) => {
      assert.ok(err instanceof PolicyParseError, String(err));
      assert.match(err.message, want);
      return true;
    }, src);
  }
});

test('policies merge: capabilities unite, deny wins, the greater coarse disposition is kept', async () => {
  const a = await parsePolicy('namespace "web" { policy = "read" }\nnode { policy = "read" }');
  const b = await parsePolicy('namespace "web" { capabilities = ["submit-job"] }\nnode { policy = "write" }');
  const c = await parsePolicy('namespace "web" { policy = "deny" }');
  const ab = Acl.compile([a, b]);
  assert.ok(ab.allowNamespaceOperation('web', 'read-job') && ab.allowNamespaceOperation('web', 'submit-job'));
  assert.ok(ab.allowNodeWrite());
  assert.ok(!Acl.compile([a, b, c]).allowNamespaceOperation('web', 'read-job'));
  assert.deepEqual(ab.allowedNamespaces(['web', 'default', 'other'], 'read-job'), ['web']);
  assert.ok(Acl.management.allowNamespaceOperation('anything', 'alloc-node-exec'));
  assert.ok(!Acl.compile([]).allowNamespace('default'));
});
