/**
 * Blocks Caravan keeps but does not run (vault, consul, connect, csi_plugin) are stored in
 * the shape of Nomad's API structs without a decoder each: snake_case names become Nomad's
 * Go field names (`sidecar_service` → `SidecarService`, `task_id` → `TaskID`), a block written
 * once becomes an object and a repeated one a list. Registration refuses these blocks, so the
 * shape only has to be faithful enough for `job inspect` and the refusal message.
 */

/** Words Nomad's Go field names spell in capitals. */
const INITIALISMS = new Set(['id', 'ttl', 'ip', 'cpu', 'mb', 'dns', 'tls', 'url', 'http', 'grpc', 'api', 'acl', 'csi', 'cni', 'jwt', 'aws', 'uid', 'gid']);

/** `sidecar_service` → `SidecarService`, `task_id` → `TaskID`. */
export function apiFieldName(snake: string): string {
  return snake
    .split('_')
    .map((w) => (INITIALISMS.has(w) ? w.toUpperCase() : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('');
}

/**
 * Blocks that are Go maps in Nomad's API structs (a proxy's or upstream's `config`, a sidecar's
 * `meta` and `env`): their keys are the user's and stay as written, so `connect_timeout_ms`
 * stays `connect_timeout_ms` (jobspec2's TestParse_ConnectJob).
 */
const FREE_FORM = new Set(['config', 'meta', 'env', 'canary_meta', 'tagged_addresses']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Converts one hcl2json block body (after evaluation) to an API-shaped object. */
export function apiStructFromHcl(raw: unknown): Record<string, unknown> {
  const body = Array.isArray(raw) ? raw[0] : raw;
  if (!isObject(body)) return {};
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) {
    const name = apiFieldName(k);
    if (FREE_FORM.has(k)) {
      out[name] = Array.isArray(v) && v.length === 1 && isObject(v[0]) ? v[0] : v;
    } else if (Array.isArray(v) && v.length > 0 && v.every(isObject)) {
      out[name] = v.length === 1 ? apiStructFromHcl(v[0]) : v.map(apiStructFromHcl);
    } else {
      out[name] = v;
    }
  }
  return out;
}
