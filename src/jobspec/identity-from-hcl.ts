/**
 * Decoding of a task's `identity { name aud env file filepath ttl change_mode change_signal }`
 * blocks (Nomad 1.7+): the block without a name (or named "default") is the task's default
 * identity, the others its named identities. Values are checked by job validation.
 */
import type { HclBody } from './hcl-body.js';
import { DEFAULT_IDENTITY_NAME, type WorkloadIdentity } from '../structs/workload-identity.js';

/** One identity block as declared (missing fields stay missing; canonicalization fills them). */
function identityFromHcl(b: HclBody): Partial<WorkloadIdentity> {
  const id: Partial<WorkloadIdentity> = {};
  const name = b.string('name');
  if (name !== undefined) id.Name = name;
  const aud = b.stringList('aud');
  if (aud !== undefined) id.Audience = aud;
  const env = b.bool('env');
  if (env !== undefined) id.Env = env;
  const file = b.bool('file');
  if (file !== undefined) id.File = file;
  const filepath = b.string('filepath');
  if (filepath !== undefined) id.Filepath = filepath;
  const ttl = b.duration('ttl');
  if (ttl !== undefined) id.TTL = ttl;
  const mode = b.string('change_mode');
  if (mode !== undefined) id.ChangeMode = mode;
  const signal = b.string('change_signal');
  if (signal !== undefined) id.ChangeSignal = signal;
  b.finish();
  return id;
}

/** The task's identity blocks split as Nomad's Task.Identity and Task.Identities. */
export function identitiesFromHcl(task: HclBody): { Identity?: Partial<WorkloadIdentity>; Identities?: Partial<WorkloadIdentity>[] } {
  const out: { Identity?: Partial<WorkloadIdentity>; Identities?: Partial<WorkloadIdentity>[] } = {};
  const named: Partial<WorkloadIdentity>[] = [];
  for (const block of task.blocks('identity')) {
    const id = identityFromHcl(block);
    const isDefault = id.Name === undefined || id.Name === DEFAULT_IDENTITY_NAME;
    // A second default block is kept as a named one so validation reports the duplicate.
    if (isDefault && out.Identity === undefined) out.Identity = { ...id, Name: DEFAULT_IDENTITY_NAME };
    else named.push({ ...id, Name: id.Name ?? DEFAULT_IDENTITY_NAME });
  }
  if (named.length > 0) out.Identities = named;
  return out;
}
