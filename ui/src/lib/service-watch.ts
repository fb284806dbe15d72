/**
 * Which `Service` topic events (ServiceRegistration, ServiceDeregistration) concern a view: the
 * registrations of one job or of one allocation. Every other topic is ignored, so a services
 * list refetches only when one of its own rows may have changed.
 */
import type { StreamEvent } from '../../../src/server/events/event.js';
import type { ServiceRegistration } from '../../../src/structs/service-registration.js';

function serviceOf(ev: StreamEvent): ServiceRegistration | undefined {
  return ev.Topic === 'Service' ? (ev.Payload as { Service?: ServiceRegistration }).Service : undefined;
}

/** Registrations of job `id` in namespace `ns` came or went. */
export function jobServiceWatch(id: string, ns: string): (ev: StreamEvent) => boolean {
  return (ev) => {
    const s = serviceOf(ev);
    return s !== undefined && s.JobID === id && s.Namespace === ns;
  };
}

/** Registrations of allocation `allocId` came or went. */
export function allocServiceWatch(allocId: string): (ev: StreamEvent) => boolean {
  return (ev) => serviceOf(ev)?.AllocID === allocId;
}
