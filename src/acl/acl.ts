/**
 * The compiled permissions of one token: its policies' rules merged (capabilities united, deny
 * winning, the greater coarse disposition kept), answering "may this token do X?". Namespace
 * and host-volume patterns match as Nomad's: an exact name first, else the most specific glob
 * (the one whose literal part is closest in length to the name). A management token may do
 * everything. Pure.
 */
import { mergeDisposition, type Disposition } from './capabilities.js';
import type { PolicyRules } from './policy-parser.js';

/**
 * What a workload identity may do without any policy (Nomad's implicit workload policy), asked
 * before the rules: a grant only, never a denial.
 */
export interface ImplicitGrant {
  /** Whether the workload may `op` the variable at `path` in `ns`. */
  variable(ns: string, path: string, op: string): boolean;
}

interface CapSet {
  caps: Set<string>;
  variables: { path: string; caps: Set<string> }[];
}

/** What a token may do. Build with Acl.compile or use Acl.management. */
export class Acl {
  /** The ACL of a management token. */
  static readonly management = new Acl(true, new Map(), new Map(), {}, null);

  /**
   * The ACL of a token with these policies' rules (no rules: nothing is allowed); a workload
   * identity's also has its implicit grant.
   */
  static compile(policies: readonly PolicyRules[], implicit: ImplicitGrant | null = null): Acl {
    const namespaces = new Map<string, CapSet>();
    const hostVolumes = new Map<string, CapSet>();
    const coarse: Coarse = {};
    const add = (into: Map<string, CapSet>, name: string, caps: string[], variables: { path: string; capabilities: string[] }[] = []) => {
      const set = into.get(name) ?? { caps: new Set<string>(), variables: [] };
      for (const c of caps) set.caps.add(c);
      for (const v of variables) {
        const existing = set.variables.find((x) => x.path === v.path);
        if (existing) for (const c of v.capabilities) existing.caps.add(c);
        else set.variables.push({ path: v.path, caps: new Set(v.capabilities) });
      }
      into.set(name, set);
    };
    for (const p of policies) {
      for (const ns of p.namespaces) add(namespaces, ns.name, ns.capabilities, ns.variables);
      for (const hv of p.hostVolumes) add(hostVolumes, hv.name, hv.capabilities);
      for (const k of ['agent', 'node', 'operator', 'quota', 'plugin'] as const) coarse[k] = mergeDisposition(coarse[k], p[k]);
      if (p.operatorCapabilities?.length) coarse.operatorCaps = [...(coarse.operatorCaps ?? []), ...p.operatorCapabilities];
    }
    // Deny overrides every other capability of the same pattern.
    for (const m of [namespaces, hostVolumes]) for (const s of m.values()) if (s.caps.has('deny')) s.caps = new Set(['deny']);
    return new Acl(false, namespaces, hostVolumes, coarse, implicit);
  }

  private constructor(
    readonly isManagement: boolean,
    private readonly namespaces: Map<string, CapSet>,
    private readonly hostVolumes: Map<string, CapSet>,
    private readonly coarse: Coarse,
    private readonly implicit: ImplicitGrant | null,
  ) {}

  /** May the token use `capability` in namespace `ns`? */
  allowNamespaceOperation(ns: string, capability: string): boolean {
    if (this.isManagement) return true;
    const set = matching(this.namespaces, ns);
    if (!set || set.caps.has('deny')) return false;
    return set.caps.has(capability);
  }

  /** May the token do anything at all in namespace `ns` (Nomad's AllowNamespace)? */
  allowNamespace(ns: string): boolean {
    if (this.isManagement) return true;
    const set = matching(this.namespaces, ns);
    if (!set || set.caps.has('deny')) return false;
    return set.caps.size > 0 || set.variables.length > 0;
  }

  /**
   * The namespaces of `known` in which the token has `capability` (any capability when
   * undefined): how a `?namespace=*` list, the event stream and search keep to what a token may
   * see. Management tokens keep them all.
   */
  allowedNamespaces(known: Iterable<string>, capability?: string): string[] {
    const out: string[] = [];
    for (const ns of known) if (capability === undefined ? this.allowNamespace(ns) : this.allowNamespaceOperation(ns, capability)) out.push(ns);
    return out;
  }

  /** True when some namespace rule (any pattern) grants `capability`; for `*` lists. */
  allowsAnywhere(capability: string): boolean {
    if (this.isManagement) return true;
    for (const s of this.namespaces.values()) if (!s.caps.has('deny') && s.caps.has(capability)) return true;
    return false;
  }

  /** May the token use variables `op` (read, write, list, destroy) at `path` in `ns`? */
  allowVariableOperation(ns: string, path: string, op: string): boolean {
    if (this.isManagement) return true;
    if (this.implicit?.variable(ns, path, op)) return true;
    const set = matching(this.namespaces, ns);
    if (!set || set.caps.has('deny')) return false;
    const byPath = new Map(set.variables.map((v) => [v.path, v]));
    const v = matching(byPath, path);
    if (!v || v.caps.has('deny')) return false;
    return v.caps.has(op);
  }

  /** May the token mount host volume `name` with `capability` (mount-readonly, mount-readwrite)? */
  allowHostVolumeOperation(name: string, capability: string): boolean {
    if (this.isManagement) return true;
    const set = matching(this.hostVolumes, name);
    if (!set || set.caps.has('deny')) return false;
    return set.caps.has(capability);
  }

  allowNodeRead(): boolean {
    return this.allow('node', 'read');
  }
  allowNodeWrite(): boolean {
    return this.allow('node', 'write');
  }
  allowAgentRead(): boolean {
    return this.allow('agent', 'read');
  }
  allowAgentWrite(): boolean {
    return this.allow('agent', 'write');
  }
  allowOperatorRead(): boolean {
    return this.allow('operator', 'read');
  }
  allowOperatorWrite(): boolean {
    return this.allow('operator', 'write');
  }
  allowQuotaRead(): boolean {
    return this.allow('quota', 'read');
  }
  allowQuotaWrite(): boolean {
    return this.allow('quota', 'write');
  }
  allowPluginRead(): boolean {
    return this.allow('plugin', 'read');
  }
  allowPluginList(): boolean {
    return this.allow('plugin', 'list');
  }

  /** Coarse rules: write implies read, read implies list; deny or no rule refuses. */
  allow(rule: 'agent' | 'node' | 'operator' | 'quota' | 'plugin', level: 'list' | 'read' | 'write'): boolean {
    if (this.isManagement) return true;
    const d = this.coarse[rule];
    if (d === undefined || d === 'deny') return false;
    if (level === 'write') return d === 'write';
    if (level === 'read') return d === 'write' || d === 'read';
    return d === 'write' || d === 'read' || d === 'list';
  }
}

interface Coarse {
  agent?: Disposition;
  node?: Disposition;
  operator?: Disposition;
  operatorCaps?: string[];
  quota?: Disposition;
  plugin?: Disposition;
}

/** Nomad's glob match: `*` stands for any run of characters. */
export function globMatches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  const re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(name);
}

/** The rule for `name`: its exact pattern, else the most specific matching glob. */
function matching<T>(rules: Map<string, T>, name: string): T | undefined {
  const exact = rules.get(name);
  if (exact) return exact;
  let best: { diff: number; pattern: string; value: T } | undefined;
  for (const [pattern, value] of rules) {
    if (!pattern.includes('*') || !globMatches(pattern, name)) continue;
    const diff = name.length - pattern.replace(/\*/g, '').length;
    if (!best || diff < best.diff || (diff === best.diff && pattern < best.pattern)) best = { diff, pattern, value };
  }
  return best?.value;
}
