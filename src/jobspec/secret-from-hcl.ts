/**
 * Decoding of a task's `secret "name" { provider path config {…} env {…} }` blocks (Nomad
 * 1.11's secret providers: nomad variables, Vault, or a custom plugin, read by the client into
 * `${secret.<name>.<key>}`) into Nomad's api.Secret shape. Caravan has no secret providers
 * yet, so the blocks are kept for registration to refuse by name.
 */
import type { HclBody } from './hcl-body.js';
import type { TaskSecret } from '../structs/job.js';

export function secretsFromHcl(task: HclBody): TaskSecret[] | undefined {
  const out = task.labelled('secret').map(({ label, body }) => {
    const s: TaskSecret = { Name: label, Provider: body.string('provider') ?? '', Path: body.string('path') ?? '', Config: body.freeMap('config') ?? null, Env: body.stringMap('env') ?? null };
    body.finish();
    return s;
  });
  return out.length > 0 ? out : undefined;
}
