/**
 * `${…}` interpolation of task config and env, as Nomad does it: `${NOMAD_ALLOC_ID}` and
 * other task env vars, `${node.unique.id}`, `${node.datacenter}`, `${node.unique.name}`,
 * `${node.class}`, `${node.region}`, `${attr.<name>}`, `${meta.<key>}`, `${env.<VAR>}`.
 * An unknown reference is left as written, as Nomad leaves it.
 */
import type { HostEnvLookup } from './host-env.js';

/** What interpolation can see. */
export interface InterpolationScope {
  /** The task's environment (NOMAD_* and the task's own env). */
  env: Record<string, string>;
  /**
   * The agent's own environment, for `${env.X}` / `${X}` not set in `env`: looked up by name
   * (host-env.ts), never copied, and never the variables of the client's env.denylist.
   */
  hostEnv?: HostEnvLookup;
  /** Node values keyed without the "node." prefix: unique.id, datacenter, unique.name, class, region. */
  node: Record<string, string>;
  attributes: Record<string, string>;
  meta: Record<string, string>;
}

const REF = /\$\{([^{}]+)\}/g;

/** Resolves one reference (the text between `${` and `}`), or undefined when unknown. */
export function resolveReference(ref: string, scope: InterpolationScope): string | undefined {
  const key = ref.trim();
  if (key.startsWith('node.')) {
    const k = key.slice(5);
    return scope.node[k];
  }
  if (key.startsWith('attr.')) return scope.attributes[key.slice(5)];
  if (key.startsWith('meta.')) return scope.meta[key.slice(5)];
  return envValue(key.startsWith('env.') ? key.slice(4) : key, scope);
}

/** A variable of the task's env, else of the agent's; only own string values (never `toString`). */
function envValue(name: string, scope: InterpolationScope): string | undefined {
  if (Object.hasOwn(scope.env, name)) return scope.env[name];
  return scope.hostEnv?.(name);
}

/** Replaces every known `${…}` in a string. */
export function interpolateString(s: string, scope: InterpolationScope): string {
  if (!s.includes('${')) return s;
  return s.replace(REF, (whole, ref: string) => resolveReference(ref, scope) ?? whole);
}

/** Interpolates every string inside a JSON-like value (keys of objects too), returning a copy. */
export function interpolateValue(v: unknown, scope: InterpolationScope): unknown {
  if (typeof v === 'string') return interpolateString(v, scope);
  if (Array.isArray(v)) return v.map((x) => interpolateValue(x, scope));
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      out[interpolateString(k, scope)] = interpolateValue(x, scope);
    }
    return out;
  }
  return v;
}
