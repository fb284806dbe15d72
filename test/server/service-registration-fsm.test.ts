import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { StateStore } from '../../src/server/state/state-store.js';
import { Fsm } from '../../src/server/fsm/fsm.js';
import { serviceTableKey, Table } from '../../src/server/state/state-reader.js';
import type { Command } from '../../src/server/fsm/commands.js';
import type { StreamEvent } from '../../src/server/events/event.js';
import {
  admitServiceRegistrations,
  chooseServices,
  rendezvousHash,
  serviceRegistrationId,
  ServiceRegistrationInvalidError,
  type ServiceRegistration,
  type ServiceRegistrationInput,
} from '../../src/structs/service-registration.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { nodeCmd, placeCmd, registerCmd, NOW } from './fsm-helpers.js';

function cluster(): { state: StateStore; apply: (c: Command) => StreamEvent[]; allocIds: string[]; nodeIds: string[] } {
  const state = new StateStore();
  const fsm = new Fsm(state);
  let index = 0;
  const apply = (c: Command): StreamEvent[] => fsm.apply(c, ++index);
  const nodes = [mockNode(), mockNode()];
  for (const n of nodes) apply(nodeCmd(n));
  const job = mockJob({ ID: 'web' });
  apply(registerCmd(job));
  const stored = state.jobById('default', 'web')!;
  apply(placeCmd(stored, nodes[0]!, 2));
  apply(placeCmd(stored, nodes[1]!, 1));
  const allocIds = state.allocs().map((a) => a.ID);
  return { state, apply, allocIds, nodeIds: nodes.map((n) => n.ID) };
}

function reg(state: StateStore, allocId: string, name = 'api', port = 8080, tags: string[] | null = null): ServiceRegistrationInput {
  const a = state.allocById(allocId)!;
  return {
    ID: serviceRegistrationId(a.ID, 'web', name, 'http'),
    ServiceName: name,
    Namespace: a.Namespace,
    NodeID: a.NodeID,
    Datacenter: 'dc1',
    JobID: a.JobID,
    AllocID: a.ID,
    Tags: tags,
    Address: '127.0.0.1',
    Port: port,
  };
}

describe('service registrations in the FSM', () => {
  it('upserts with indexes, keeps CreateIndex, publishes Service events and skips an unchanged instance', () => {
    const { state, apply, allocIds } = cluster();
    const r = reg(state, allocIds[0]!);
    const ev = apply({ Type: 'ServiceRegistrationUpsert', Services: [r], Now: NOW });
    const first = state.serviceRegistrationById(r.ID)!;
    assert.equal(first.CreateIndex, first.ModifyIndex);
    assert.deepEqual(ev.map((e) => [e.Topic, e.Type, e.Key]), [['Service', 'ServiceRegistration', r.ID]]);
    assert.equal(state.tableIndex(Table.Services), first.ModifyIndex);
    assert.equal(state.serviceIndex('default', 'api'), first.ModifyIndex);
    // The same instance again changes nothing a reader sees.
    assert.deepEqual(apply({ Type: 'ServiceRegistrationUpsert', Services: [r], Now: NOW }), []);
    assert.equal(state.tableIndex(Table.Services), first.ModifyIndex);
    apply({ Type: 'ServiceRegistrationUpsert', Services: [{ ...r, Port: 9090 }], Now: NOW });
    const second = state.serviceRegistrationById(r.ID)!;
    assert.equal(second.CreateIndex, first.CreateIndex);
    assert.ok(second.ModifyIndex > first.ModifyIndex);
    assert.equal(second.Port, 9090);
  });

  it('indexes by name, alloc and job; a change to one service leaves another service\'s index alone', () => {
    const { state, apply, allocIds } = cluster();
    apply({ Type: 'ServiceRegistrationUpsert', Services: [reg(state, allocIds[0]!, 'api'), reg(state, allocIds[1]!, 'api'), reg(state, allocIds[2]!, 'db')], Now: NOW });
    assert.equal(state.serviceRegistrationsByName('default', 'api').length, 2);
    assert.equal(state.serviceRegistrationsByAlloc(allocIds[2]!).length, 1);
    assert.equal(state.serviceRegistrationsByJob('default', 'web').length, 3);
    const dbIndex = state.serviceIndex('default', 'db');
    apply({ Type: 'ServiceRegistrationDelete', IDs: [reg(state, allocIds[0]!, 'api').ID], Now: NOW });
    assert.equal(state.serviceRegistrationsByName('default', 'api').length, 1);
    assert.equal(state.serviceIndex('default', 'db'), dbIndex);
    assert.ok(state.serviceIndex('default', 'api') > dbIndex);
    assert.equal(state.tableIndex(serviceTableKey('default', 'db')), dbIndex);
    assert.equal(state.tableIndex(serviceTableKey('default', 'api')), state.serviceIndex('default', 'api'));
  });

  it('a blocking wait on one service is woken by a change to that service only', async () => {
    const { state, apply, allocIds } = cluster();
    apply({ Type: 'ServiceRegistrationUpsert', Services: [reg(state, allocIds[0]!, 'api'), reg(state, allocIds[1]!, 'db')], Now: NOW });
    const dbKey = serviceTableKey('default', 'db');
    let woke = false;
    const wait = state.waitForChange([dbKey], state.tableIndex(dbKey), 60_000).then((i) => {
      woke = true;
      return i;
    });
    apply({ Type: 'ServiceRegistrationUpsert', Services: [{ ...reg(state, allocIds[0]!, 'api'), Port: 1 }], Now: NOW });
    await new Promise((r) => setImmediate(r));
    assert.equal(woke, false, 'a change to api does not wake a wait on db');
    apply({ Type: 'ServiceRegistrationDelete', IDs: [reg(state, allocIds[1]!, 'db').ID], Now: NOW });
    assert.equal(await wait, state.serviceIndex('default', 'db'));
  });

  it('removes an allocation\'s registrations when it ends, and a node\'s when it is marked down', () => {
    const { state, apply, allocIds, nodeIds } = cluster();
    apply({ Type: 'ServiceRegistrationUpsert', Services: allocIds.map((id) => reg(state, id)), Now: NOW });
    assert.equal(state.serviceRegistrations('*').length, 3);
    const ended = allocIds.find((id) => state.allocById(id)!.NodeID === nodeIds[0])!;
    const ev = apply({ Type: 'AllocClientUpdate', Allocs: [{ ID: ended, ClientStatus: 'complete', ClientDescription: '', TaskStates: {} }], Evals: [], Now: NOW } as unknown as Command);
    assert.deepEqual(ev.filter((e) => e.Topic === 'Service').map((e) => e.Type), ['ServiceDeregistration']);
    assert.equal(state.serviceRegistrationsByAlloc(ended).length, 0);
    // A late registration of the ended allocation is dropped at apply.
    apply({ Type: 'ServiceRegistrationUpsert', Services: [reg(state, ended)], Now: NOW });
    assert.equal(state.serviceRegistrationsByAlloc(ended).length, 0);
    const down = nodeIds[1]!;
    const elsewhere = state.serviceRegistrations('*').filter((r) => r.NodeID !== down).map((r) => r.ID);
    assert.ok(state.serviceRegistrations('*').some((r) => r.NodeID === down));
    apply({ Type: 'NodeUpdateStatus', NodeID: down, Status: 'down', Event: null, Evals: [], Now: NOW });
    assert.deepEqual(state.serviceRegistrations('*').map((r) => r.ID), elsewhere);
  });

  it('rolls the table back when an apply fails part-way', () => {
    const { state, apply, allocIds } = cluster();
    apply({ Type: 'ServiceRegistrationUpsert', Services: [reg(state, allocIds[0]!)], Now: NOW });
    const before = JSON.stringify(state.serviceRegistrations('*'));
    const index = state.tableIndex(Table.Services);
    // A deletion followed by a malformed registration (no Tags list to read) throws mid-apply.
    const bad = { ...reg(state, allocIds[1]!), get Port(): number { throw new Error('boom'); } };
    assert.throws(() => apply({ Type: 'ServiceRegistrationUpsert', Services: [{ ...reg(state, allocIds[0]!), Port: 1 }, bad], Now: NOW }));
    assert.equal(JSON.stringify(state.serviceRegistrations('*')), before);
    assert.equal(state.tableIndex(Table.Services), index);
  });

  it('survives serialize and restore', () => {
    const { state, apply, allocIds } = cluster();
    apply({ Type: 'ServiceRegistrationUpsert', Services: [reg(state, allocIds[0]!, 'api', 1, ['a', 'b'])], Now: NOW });
    const copy = new StateStore();
    copy.restore(JSON.parse(JSON.stringify(state.serialize())));
    assert.deepEqual(copy.serviceRegistrations('*'), state.serviceRegistrations('*'));
    assert.equal(copy.serviceRegistrationsByName('default', 'api').length, 1);
  });
});

describe('service registration admission', () => {
  it('names the bad field', () => {
    const ok = { ID: 'x', ServiceName: 'api', Namespace: 'default', NodeID: 'n', JobID: 'j', AllocID: 'a', Address: '10.0.0.1', Port: 80 };
    assert.equal(admitServiceRegistrations({ Services: [ok] }).length, 1);
    const cases: [Record<string, unknown>, string][] = [
      [{ ...ok, ServiceName: 'bad/../name' }, 'Services[0].ServiceName'],
      [{ ...ok, Address: '0.0.0.0' }, 'Services[0].Address'],
      [{ ...ok, Port: 70000 }, 'Services[0].Port'],
      [{ ...ok, Tags: [1] }, 'Services[0].Tags'],
      [{ ...ok, AllocID: '' }, 'Services[0].AllocID'],
    ];
    for (const [bad, field] of cases) {
      assert.throws(() => admitServiceRegistrations({ Services: [bad] }), (e: unknown) => e instanceof ServiceRegistrationInvalidError && e.field === field, field);
    }
  });
});

describe('rendezvous choice (?choose=N|key)', () => {
  const instances: ServiceRegistration[] = Array.from({ length: 10 }, (_, i) => ({
    ID: `id-${i}`, ServiceName: 'api', Namespace: 'default', NodeID: 'n', Datacenter: 'dc1', JobID: 'j', AllocID: `a-${i}`, Tags: null, Address: '10.0.0.1', Port: 8000 + i, CreateIndex: 1, ModifyIndex: 1,
  }));

  it('is Nomad\'s md5 hash and is stable per key', () => {
    // md5(port as 8 big-endian bytes ‖ alloc ‖ id ‖ namespace ‖ address ‖ name ‖ key), hex.
    assert.match(rendezvousHash(instances[0]!, 'k'), /^[0-9a-f]{32}$/);
    const a = chooseServices(instances, '3|client-1')!.map((s) => s.ID);
    assert.equal(a.length, 3);
    assert.deepEqual(chooseServices([...instances].reverse(), '3|client-1')!.map((s) => s.ID), a);
    assert.equal(chooseServices(instances, '20|k')!.length, 10);
  });

  it('moves few choices when an instance goes away', () => {
    let moved = 0;
    for (let k = 0; k < 50; k++) {
      const before = chooseServices(instances, `1|key-${k}`)![0]!.ID;
      const after = chooseServices(instances.slice(1), `1|key-${k}`)![0]!.ID;
      if (before !== after) moved++;
      if (before !== 'id-0') assert.equal(after, before);
    }
    assert.ok(moved < 50);
  });

  it('refuses a malformed parameter', () => {
    for (const p of ['3', 'x|k', '3|', '']) assert.equal(chooseServices(instances, p), null, p);
  });
});
