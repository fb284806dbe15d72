/**
 * `resources { device "vendor/type/name" { count constraint affinity first_available } }`,
 * in the shape of Nomad's API RequestedDevice. Caravan's clients fingerprint no devices, so
 * registration refuses a task that asks for one (job-feature-checks); the block is decoded
 * so that Nomad's job files parse, and `job validate` says why they cannot run.
 */
import type { HclBody, LabelledBlock } from './hcl-body.js';
import { placementFromHcl } from './placement-from-hcl.js';

/** One way to satisfy a device request: how many, and on which devices. */
export interface DeviceOption {
  Count?: number;
  Constraints?: unknown[];
  Affinities?: unknown[];
}

/** A task's request for devices, as Nomad's API writes it. */
export interface RequestedDevice extends DeviceOption {
  Name: string;
  /** Alternatives tried in order (Nomad 1.11 `first_available`); the first that fits wins. */
  FirstAvailable?: DeviceOption[];
}

function optionFromHcl(b: HclBody): DeviceOption {
  const out: DeviceOption = {};
  const count = b.number('count');
  if (count !== undefined) {
    if (count < 0) b.problem('count', `count must be zero or more, got ${count}`);
    out.Count = count;
  }
  const placement = placementFromHcl(b, false);
  if (placement.Constraints) out.Constraints = placement.Constraints;
  if (placement.Affinities) out.Affinities = placement.Affinities;
  return out;
}

function deviceFromHcl({ label, body }: LabelledBlock): RequestedDevice {
  const device: RequestedDevice = { Name: label, ...optionFromHcl(body) };
  const alternatives = body.blocks('first_available').map((alt) => {
    const option = optionFromHcl(alt);
    alt.finish();
    return option;
  });
  if (alternatives.length > 0) device.FirstAvailable = alternatives;
  body.finish();
  return device;
}

/** Every `device` block of a resources body, in order; none gives undefined. */
export function devicesFromHcl(resources: HclBody): RequestedDevice[] | undefined {
  const devices = resources.labelled('device').map(deviceFromHcl);
  return devices.length > 0 ? devices : undefined;
}
