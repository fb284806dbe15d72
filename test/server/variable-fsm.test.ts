import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import { Table } from '../../src/server/state/state-reader.js';
import { admitVariable, variablePathProblem } from '../../src/structs/variable.js';

describe('variables in the FSM', () => {
  it('sets, keeps CreateIndex, checks-and-sets at apply, and deletes', () => {
    const state = new StateStore();
    const fsm = new Fsm(state);
    const set = (items: Record<string, string>, index: number, cas?: number) =>
      fsm.apply({ Type: 'VariableSet', Variable: { Namespace: 'default', Path: 'a/b', Items: items }, ...(cas !== undefined ? { Cas: cas } : {}), Now: index * 1000 }, index);
    set({ k: '1' }, 5, 0);
    assert.deepEqual(state.variableByPath('default', 'a/b'), { Namespace: 'default', Path: 'a/b', Items: { k: '1' }, CreateIndex: 5, CreateTime: 5000, ModifyIndex: 5, ModifyTime: 5000 });
    // A stale index (and cas=0 on an existing variable) changes nothing and touches no table.
    set({ k: 'stale' }, 6, 0);
    set({ k: 'stale' }, 7, 4);
    assert.equal(state.variableByPath('default', 'a/b')?.Items['k'], '1');
    assert.equal(state.tableIndex(Table.Variables), 5);
    set({ k: '2' }, 8, 5);
    assert.deepEqual([state.variableByPath('default', 'a/b')?.CreateIndex, state.variableByPath('default', 'a/b')?.ModifyIndex], [5, 8]);
    fsm.apply({ Type: 'VariableDelete', Namespace: 'default', Path: 'a/b', Cas: 5, Now: 0 }, 9);
    assert.ok(state.variableByPath('default', 'a/b'), 'a stale delete keeps the variable');
    fsm.apply({ Type: 'VariableDelete', Namespace: 'default', Path: 'a/b', Cas: 8, Now: 0 }, 10);
    assert.equal(state.variableByPath('default', 'a/b'), undefined);
    assert.equal(state.tableIndex(Table.Variables), 10);
  });

  it('survives serialize and restore', () => {
    const state = new StateStore();
    new Fsm(state).apply({ Type: 'VariableSet', Variable: { Namespace: 'ns1', Path: 'x', Items: { a: 'b' } }, Now: 1 }, 1);
    const copy = new StateStore();
    copy.restore(JSON.parse(JSON.stringify(state.serialize())));
    assert.deepEqual(copy.variables('*'), state.variables('*'));
  });
});

describe('variable admission (Nomad rules)', () => {
  it('refuses bad paths, empty items, non-string items and the wildcard namespace', () => {
    assert.equal(variablePathProblem('app/db'), undefined);
    assert.equal(variablePathProblem('nomad/jobs/web'), undefined);
    assert.equal(variablePathProblem('nomad/job-templates/t'), undefined);
    assert.match(variablePathProblem('has space') ?? '', /invalid path "has space"/);
    assert.match(variablePathProblem('nomad') ?? '', /reserved top-level directory/);
    assert.match(variablePathProblem('nomad/other') ?? '', /only paths at "nomad\/jobs"/);
    assert.match(variablePathProblem('x'.repeat(129)) ?? '', /invalid path/);
    assert.throws(() => admitVariable({ Items: {} }, 'default', 'a'), /variable missing required Items object/);
    assert.throws(() => admitVariable({ Items: { a: 1 } }, 'default', 'a'), /Items\["a"\] must be a string/);
    assert.throws(() => admitVariable({ Items: { a: 'b' } }, '*', 'a'), /wildcard/);
    assert.throws(() => admitVariable({ Items: { a: 'x'.repeat(70000) } }, 'default', 'a'), /64KiB/);
  });
});
