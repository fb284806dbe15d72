/** Nomad's event stream objects: what every applied command publishes. */
import type { Allocation, Deployment, Evaluation, Job, Node } from '../../structs/index.js';
import type { ServiceRegistration } from '../../structs/service-registration.js';
import type { HostVolume } from '../../structs/dynamic-host-volume.js';

export const EventTopic = {
  Job: 'Job',
  Allocation: 'Allocation',
  Evaluation: 'Evaluation',
  Node: 'Node',
  Deployment: 'Deployment',
  /** Native service registrations (ServiceRegistration, ServiceDeregistration). */
  Service: 'Service',
  /** Dynamic host volumes (HostVolumeRegistered, HostVolumeDeleted), as Nomad 1.10's. */
  HostVolume: 'HostVolume',
} as const;
export type EventTopic = (typeof EventTopic)[keyof typeof EventTopic];

/** One event, with Nomad's field names. */
export interface StreamEvent {
  Topic: EventTopic;
  Type: string;
  Key: string;
  Namespace: string;
  FilterKeys: string[] | null;
  Index: number;
  Payload:
    | { Job: Job }
    | { Allocation: Allocation }
    | { Evaluation: Evaluation }
    | { Node: Node }
    | { Deployment: Deployment }
    | { Service: ServiceRegistration }
    | { HostVolume: Omit<HostVolume, 'DeleteRequested'> };
}

/** The events of one log index. */
export interface EventBatch {
  Index: number;
  Events: StreamEvent[];
}
