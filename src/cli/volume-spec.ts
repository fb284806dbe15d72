/**
 * Nomad's volume specification, as `nomad volume create` and `volume register` read it, for
 * `type = "host"`: `name`, `namespace`, `id`, `plugin_id`, `node_id`, `node_pool`, `host_path`,
 * `capacity_min`/`capacity_max` (sizes such as "10GiB"), `capability { access_mode
 * attachment_mode }`, `constraint { attribute operator value }` and `parameters { … }` — in HCL,
 * or the API's Volume as JSON (a `.json` file or `-json`). Anything else is refused, naming it.
 */
import { parse as parseHcl } from '@cdktf/hcl2json';
import { CliUsageError } from './cli-context.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const KNOWN = new Set(['type', 'name', 'namespace', 'id', 'plugin_id', 'node_id', 'node_pool', 'host_path', 'capacity_min', 'capacity_max', 'capability', 'constraint', 'parameters']);

/** Units of a size (go-humanize's ParseBytes: SI and IEC, case-insensitive). */
const SIZE_UNITS: Record<string, number> = {
  '': 1, b: 1,
  k: 1e3, kb: 1e3, kib: 1024, ki: 1024,
  m: 1e6, mb: 1e6, mib: 1024 ** 2, mi: 1024 ** 2,
  g: 1e9, gb: 1e9, gib: 1024 ** 3, gi: 1024 ** 3,
  t: 1e12, tb: 1e12, tib: 1024 ** 4, ti: 1024 ** 4,
};

/** A size as a number of bytes ("10GiB", "500 MB", 1024); CliUsageError naming `field` otherwise. */
export function parseSize(field: string, v: unknown): number {
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  const m = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(v) : null;
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new CliUsageError(`${field}: invalid size ${JSON.stringify(v)} (want e.g. "10GiB")`);
  return Math.round(Number(m[1]) * unit);
}

/** A block hcl2json gives as a list of bodies (or a map attribute as an object). */
function blocks(v: unknown): Obj[] {
  if (v === undefined) return [];
  if (Array.isArray(v)) return v.filter(isObj);
  return isObj(v) ? [v] : [];
}

function str(o: Obj, key: string, file: string): string | undefined {
  const v = o[key];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new CliUsageError(`${file}: ${key} must be a string`);
  return v;
}

/**
 * The API `Volume` a specification file describes. `type` must be "host" (CSI volumes are not
 * run by Caravan). JSON is taken as the API's Volume (or `{Volume: …}`) as it is.
 */
export async function readVolumeSpec(file: string, text: string, json: boolean): Promise<Obj> {
  if (json || file.endsWith('.json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new CliUsageError(`${file}: invalid JSON: ${(err as Error).message}`);
    }
    if (!isObj(parsed)) throw new CliUsageError(`${file}: want a volume object`);
    const vol = isObj(parsed['Volume']) ? parsed['Volume'] : parsed;
    const type = vol['Type'] ?? parsed['Type'];
    if (type !== undefined && type !== 'host') throw new CliUsageError(`${file}: volume type ${JSON.stringify(type)} is not supported: Caravan runs host volumes only`);
    const { Type: _type, ...rest } = vol;
    return rest;
  }
  let body: Obj;
  try {
    body = (await parseHcl(file, text)) as Obj;
  } catch (err) {
    throw new CliUsageError(`${file}: ${(err as Error).message}`);
  }
  for (const k of Object.keys(body)) if (!KNOWN.has(k)) throw new CliUsageError(`${file}: unsupported argument "${k}"`);
  const type = str(body, 'type', file);
  if (type === undefined) throw new CliUsageError(`${file}: missing type (want type = "host")`);
  if (type !== 'host') throw new CliUsageError(`${file}: volume type ${JSON.stringify(type)} is not supported: Caravan runs host volumes only`);
  const vol: Obj = {};
  const put = (apiKey: string, specKey: string) => {
    const v = str(body, specKey, file);
    if (v !== undefined) vol[apiKey] = v;
  };
  put('Name', 'name');
  put('Namespace', 'namespace');
  put('ID', 'id');
  put('PluginID', 'plugin_id');
  put('NodeID', 'node_id');
  put('NodePool', 'node_pool');
  put('HostPath', 'host_path');
  if (body['capacity_min'] !== undefined) vol['RequestedCapacityMinBytes'] = parseSize(`${file}: capacity_min`, body['capacity_min']);
  if (body['capacity_max'] !== undefined) vol['RequestedCapacityMaxBytes'] = parseSize(`${file}: capacity_max`, body['capacity_max']);
  const caps = blocks(body['capability']).map((c) => {
    for (const k of Object.keys(c)) if (k !== 'access_mode' && k !== 'attachment_mode') throw new CliUsageError(`${file}: capability: unsupported argument "${k}"`);
    return { AccessMode: str(c, 'access_mode', file) ?? '', AttachmentMode: str(c, 'attachment_mode', file) ?? '' };
  });
  if (caps.length > 0) vol['RequestedCapabilities'] = caps;
  const constraints = blocks(body['constraint']).map((c) => {
    for (const k of Object.keys(c)) if (!['attribute', 'operator', 'value'].includes(k)) throw new CliUsageError(`${file}: constraint: unsupported argument "${k}"`);
    return { LTarget: str(c, 'attribute', file) ?? '', Operand: str(c, 'operator', file) ?? '=', RTarget: str(c, 'value', file) ?? '' };
  });
  if (constraints.length > 0) vol['Constraints'] = constraints;
  const params: Record<string, string> = {};
  for (const p of blocks(body['parameters'])) {
    for (const [k, v] of Object.entries(p)) {
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean') throw new CliUsageError(`${file}: parameters.${k} must be a string`);
      params[k] = String(v);
    }
  }
  if (Object.keys(params).length > 0) vol['Parameters'] = params;
  return vol;
}
