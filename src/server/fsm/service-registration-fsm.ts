/**
 * How the FSM applies service registration commands, and the `Service` events they publish
 * (Nomad's ServiceRegistration / ServiceDeregistration, payload `{Service}`). Registrations
 * removed as a side effect of another command (an allocation ending, a node marked down) are
 * published by serviceDeregistrationEvents from what the store collected during the apply.
 */
import { isTerminalClientStatus } from '../../structs/alloc.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { StreamEvent } from '../events/event.js';
import { Table } from '../state/state-reader.js';
import type { StateStore } from '../state/state-store.js';
import type { ServiceRegistrationDeleteCommand, ServiceRegistrationUpsertCommand } from './commands.js';

function serviceEvent(type: 'ServiceRegistration' | 'ServiceDeregistration', r: ServiceRegistration, index: number): StreamEvent {
  return { Topic: 'Service', Type: type, Key: r.ID, Namespace: r.Namespace, FilterKeys: [r.JobID, r.ServiceName], Index: index, Payload: { Service: r } };
}

function sameRegistration(a: ServiceRegistration, b: Omit<ServiceRegistration, 'CreateIndex' | 'ModifyIndex'>): boolean {
  return (
    a.ServiceName === b.ServiceName &&
    a.Namespace === b.Namespace &&
    a.NodeID === b.NodeID &&
    a.Datacenter === b.Datacenter &&
    a.JobID === b.JobID &&
    a.AllocID === b.AllocID &&
    a.Address === b.Address &&
    a.Port === b.Port &&
    JSON.stringify(a.Tags ?? []) === JSON.stringify(b.Tags ?? [])
  );
}

export function applyServiceRegistrationUpsert(state: StateStore, cmd: ServiceRegistrationUpsertCommand, index: number, ev: StreamEvent[]): void {
  for (const input of cmd.Services) {
    const alloc = state.allocById(input.AllocID);
    if (!alloc || isTerminalClientStatus(alloc.ClientStatus)) continue;
    const prev = state.serviceTable.get(input.ID);
    if (prev && sameRegistration(prev, input)) continue;
    const r: ServiceRegistration = { ...input, Tags: input.Tags && input.Tags.length > 0 ? input.Tags : null, CreateIndex: prev?.CreateIndex ?? index, ModifyIndex: index };
    state.serviceTable.put(r, index);
    state.touch(index, Table.Services);
    ev.push(serviceEvent('ServiceRegistration', r, index));
  }
}

export function applyServiceRegistrationDelete(state: StateStore, cmd: ServiceRegistrationDeleteCommand, index: number): void {
  state.deleteServiceRegistrations(cmd.IDs, index);
}

/** Removes the registrations of a node the servers marked down (Nomad's DeleteByNodeID, done by the server itself). */
export function deleteNodeServices(state: StateStore, nodeId: string, index: number): void {
  const regs = state.serviceTable.byNodeId(nodeId);
  if (regs.length > 0) state.deleteServiceRegistrations(regs.map((r) => r.ID), index);
}

/** The ServiceDeregistration events of every registration the apply removed. */
export function serviceDeregistrationEvents(state: StateStore, index: number): StreamEvent[] {
  return state.takeRemovedServices().map((r) => serviceEvent('ServiceDeregistration', r, index));
}
