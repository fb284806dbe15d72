import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mockNode } from '../mock/factories.js';
import { datacenterMatches, nodeMeetsConstraint, resolveTarget } from '../../src/scheduler/constraint-check.js';
import { versionSatisfies } from '../../src/scheduler/version-constraint.js';

const node = mockNode({
  ID: 'abc-123',
  Name: 'worker-1',
  Datacenter: 'dc1',
  NodeClass: 'large',
  NodePool: 'default',
  Attributes: { 'kernel.name': 'linux', 'cpu.numcores': '8', 'nomad.version': '1.7.2', 'os.version': '22.04', 'driver.docker.caps': 'a,b,c' },
  Meta: { rack: 'r1', tags: 'ssd,gpu' },
});

const cases: { name: string; l: string; op: string; r: string; want: boolean }[] = [
  { name: '= match', l: '${attr.kernel.name}', op: '=', r: 'linux', want: true },
  { name: '== mismatch', l: '${attr.kernel.name}', op: '==', r: 'windows', want: false },
  { name: 'is', l: '${node.datacenter}', op: 'is', r: 'dc1', want: true },
  { name: '!=', l: '${node.class}', op: '!=', r: 'small', want: true },
  { name: 'not', l: '${node.class}', op: 'not', r: 'large', want: false },
  { name: '< numeric', l: '${attr.cpu.numcores}', op: '<', r: '10', want: true },
  { name: '<= numeric', l: '${attr.cpu.numcores}', op: '<=', r: '8', want: true },
  { name: '> numeric', l: '${attr.cpu.numcores}', op: '>', r: '10', want: false },
  { name: '>= lexical', l: '${meta.rack}', op: '>=', r: 'r0', want: true },
  { name: 'regexp', l: '${node.unique.name}', op: 'regexp', r: '^worker-\\d+$', want: true },
  { name: 'bad regexp', l: '${node.unique.name}', op: 'regexp', r: '([', want: false },
  { name: 'version range', l: '${attr.nomad.version}', op: 'version', r: '>= 1.6, < 2.0', want: true },
  { name: 'version pessimistic', l: '${attr.nomad.version}', op: 'version', r: '~> 1.7.0', want: true },
  { name: 'version pessimistic miss', l: '${attr.nomad.version}', op: 'version', r: '~> 1.6.0', want: false },
  { name: 'semver', l: '${attr.nomad.version}', op: 'semver', r: '>= 1.7.2-beta', want: true },
  { name: 'set_contains', l: '${meta.tags}', op: 'set_contains', r: 'gpu', want: true },
  { name: 'set_contains_all', l: '${meta.tags}', op: 'set_contains_all', r: 'gpu,nvme', want: false },
  { name: 'set_contains_any', l: '${meta.tags}', op: 'set_contains_any', r: 'nvme,ssd', want: true },
  { name: 'is_set', l: '${meta.rack}', op: 'is_set', r: '', want: true },
  { name: 'is_not_set', l: '${meta.missing}', op: 'is_not_set', r: '', want: true },
  { name: 'missing attr fails =', l: '${attr.nope}', op: '=', r: 'x', want: false },
  { name: 'unique id', l: '${node.unique.id}', op: '=', r: 'abc-123', want: true },
  { name: 'pool', l: '${node.pool}', op: '=', r: 'default', want: true },
  { name: 'unknown operator', l: '${node.pool}', op: 'frobnicate', r: 'default', want: false },
];

for (const c of cases) {
  test(`constraint ${c.name}`, () => {
    assert.equal(nodeMeetsConstraint({ LTarget: c.l, Operand: c.op, RTarget: c.r }, node), c.want);
  });
}

test('targets interpolate node fields and pass literals through', () => {
  assert.equal(resolveTarget('${node.unique.name}', node), 'worker-1');
  assert.equal(resolveTarget('literal', node), 'literal');
  assert.equal(resolveTarget('${attr.absent}', node), undefined);
});

test('version constraints treat pre-releases like go-version', () => {
  assert.equal(versionSatisfies('1.2.0-beta', '>= 1.0', 'version'), false);
  assert.equal(versionSatisfies('1.2.0-beta', '>= 1.0', 'semver'), true);
  assert.equal(versionSatisfies('1.2.0-beta.2', '>= 1.2.0-beta.1', 'version'), true);
  assert.equal(versionSatisfies('garbage', '>= 1.0', 'version'), false);
});

test('datacenter patterns support * wildcards', () => {
  assert.equal(datacenterMatches('us-east-1', ['us-*']), true);
  assert.equal(datacenterMatches('eu-west-1', ['us-*', 'eu-*-1']), true);
  assert.equal(datacenterMatches('dc1', ['dc2']), false);
  assert.equal(datacenterMatches('anything', ['*']), true);
});
