/**
 * The words of Nomad's ACL policy language: dispositions (`policy = "…"`) and the fine-grained
 * capabilities of each rule, with the capabilities a disposition stands for (Nomad's
 * acl/policy.go). Only these are accepted; anything else is refused by name.
 */

/** Dispositions of `policy = "…"`: `list` only for plugin, `scale` only for namespace. */
export type Disposition = 'deny' | 'read' | 'list' | 'write' | 'scale';

/** Every namespace capability Nomad knows. */
export const NAMESPACE_CAPABILITIES = [
  'deny',
  'list-jobs',
  'parse-job',
  'read-job',
  'submit-job',
  'dispatch-job',
  'read-logs',
  'read-fs',
  'alloc-exec',
  'alloc-node-exec',
  'alloc-lifecycle',
  'sentinel-override',
  'csi-register-plugin',
  'csi-write-volume',
  'csi-read-volume',
  'csi-list-volume',
  'csi-mount-volume',
  'host-volume-create',
  'host-volume-register',
  'host-volume-read',
  'host-volume-write',
  'host-volume-delete',
  'list-scaling-policies',
  'read-scaling-policy',
  'read-job-scaling',
  'scale-job',
  'submit-recommendation',
] as const;
export type NamespaceCapability = (typeof NAMESPACE_CAPABILITIES)[number];

const READ: NamespaceCapability[] = [
  'list-jobs',
  'parse-job',
  'read-job',
  'csi-list-volume',
  'csi-read-volume',
  'read-job-scaling',
  'list-scaling-policies',
  'read-scaling-policy',
  'host-volume-read',
];
const WRITE: NamespaceCapability[] = [
  ...READ,
  'scale-job',
  'submit-job',
  'dispatch-job',
  'read-logs',
  'read-fs',
  'alloc-exec',
  'alloc-lifecycle',
  'csi-mount-volume',
  'csi-write-volume',
  'submit-recommendation',
  'host-volume-create',
];
const SCALE: NamespaceCapability[] = ['list-scaling-policies', 'read-scaling-policy', 'read-job-scaling', 'scale-job', 'read-job', 'submit-recommendation'];

/** The capabilities a namespace disposition grants. */
export function expandNamespacePolicy(p: Disposition): NamespaceCapability[] {
  switch (p) {
    case 'deny':
      return ['deny'];
    case 'read':
      return READ;
    case 'write':
      return WRITE;
    case 'scale':
      return SCALE;
    default:
      return [];
  }
}

/** Capabilities implied by others (Nomad: host-volume-write implies register, create, delete, read). */
export function impliedNamespaceCapabilities(caps: readonly string[]): NamespaceCapability[] {
  const out: NamespaceCapability[] = [];
  for (const c of caps) {
    if (c === 'host-volume-write') out.push('host-volume-register', 'host-volume-create', 'host-volume-delete', 'host-volume-read');
    if (c === 'host-volume-register') out.push('host-volume-create', 'host-volume-read');
    if (c === 'host-volume-create') out.push('host-volume-read');
  }
  return out;
}

/** Capabilities of a `variables { path "…" { capabilities = […] } }` rule. */
export const VARIABLE_CAPABILITIES = ['list', 'read', 'write', 'destroy', 'deny'] as const;
export type VariableCapability = (typeof VARIABLE_CAPABILITIES)[number];

/** Capabilities of a `host_volume "…"` rule. */
export const HOST_VOLUME_CAPABILITIES = ['deny', 'mount-readonly', 'mount-readwrite'] as const;
export type HostVolumeCapability = (typeof HOST_VOLUME_CAPABILITIES)[number];

/** The capabilities a host_volume disposition grants. */
export function expandHostVolumePolicy(p: Disposition): HostVolumeCapability[] {
  if (p === 'deny') return ['deny'];
  if (p === 'read') return ['mount-readonly'];
  if (p === 'write') return ['mount-readonly', 'mount-readwrite'];
  return [];
}

/** Capabilities of an `operator` rule beside its disposition. */
export const OPERATOR_CAPABILITIES = ['deny', 'snapshot-save', 'license-read'] as const;

/** Dispositions each coarse rule accepts. */
export const RULE_DISPOSITIONS = {
  namespace: ['deny', 'read', 'write', 'scale'],
  host_volume: ['deny', 'read', 'write'],
  agent: ['deny', 'read', 'write'],
  node: ['deny', 'read', 'write'],
  operator: ['deny', 'read', 'write'],
  quota: ['deny', 'read', 'write'],
  plugin: ['deny', 'read', 'list', 'write'],
} as const satisfies Record<string, readonly Disposition[]>;

/** Which of two coarse dispositions wins when policies merge: deny first, then the greater. */
export function mergeDisposition(a: Disposition | undefined, b: Disposition | undefined): Disposition | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  if (a === 'deny' || b === 'deny') return 'deny';
  const rank: Record<Disposition, number> = { deny: 0, list: 1, read: 2, scale: 2, write: 3 };
  return rank[a] >= rank[b] ? a : b;
}
