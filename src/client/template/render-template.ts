/**
 * Renders a Nomad template: Go's text/template (the subset of go-template-parse.ts) with the
 * functions Nomad templates can use without Consul or Vault — `env`, Nomad Variables
 * (`nomadVar`, `nomadVarExists`, `nomadVarList`, `nomadVarListSafe`), native services
 * (`nomadService`, `nomadServices`; a service with no instances renders empty), Go's builtins (`and`,
 * `or`, `not`, `eq`, `ne`, `lt`, `le`, `gt`, `ge`, `len`, `index`, `print`, `printf`,
 * `println`) and a few of consul-template's string helpers. Consul and Vault lookups are
 * rejected by name, never rendered as junk.
 *
 * Variables come from a NomadVarSource the caller fills from its servers. As consul-template
 * does, a render that needs data it does not have yet still completes, and says so in
 * `blocked`: `nomadVar` of a variable that does not exist, and `nomadVarListSafe` of an empty
 * list, block until the data is there; `nomadVarExists` and `nomadVarList` never block.
 */
import type { Variable, VariableMetadata } from '../../structs/variable.js';
import type { ServiceRegistration, ServiceRegistrationListStub } from '../../structs/service-registration.js';
import { execTemplate, isTemplateObject, printValue, truthy, type TemplateFn, type TemplateObject } from './go-template-exec.js';
import { parseTemplate } from './go-template-parse.js';
import { TemplateRenderError } from './template-error.js';

export { TemplateRenderError } from './template-error.js';

/** Where variables come from; `namespace` '' is the task's own. */
export interface NomadVarSource {
  /** The variable (null: none at that path), or undefined when not fetched yet; throws TemplateRenderError when refused. */
  get(namespace: string, path: string): Variable | null | undefined;
  /** The variables under `prefix` the task may list, or undefined when not fetched yet. */
  list(namespace: string, prefix: string): VariableMetadata[] | undefined;
}

/** Where native services come from (nomadService, nomadServices); `namespace` '' is the task's own. */
export interface NomadServiceSource {
  /** The instances of a service (with `tag`, those carrying it; with `choose` "N|key", a rendezvous choice), or undefined when not fetched yet. */
  service(namespace: string, name: string, tag: string, choose: string): ServiceRegistration[] | undefined;
  /** The services of a namespace, or undefined when not fetched yet. */
  services(namespace: string): ServiceRegistrationListStub[] | undefined;
}

/** Inputs of one render. */
export interface RenderOptions {
  leftDelim?: string;
  rightDelim?: string;
  /** The task's environment, read by `env "NAME"` (unset names render as ""). */
  env: Readonly<Record<string, string>>;
  /** Variables; without one, the variable functions fail the render. */
  nomad?: NomadVarSource;
  /** Native services; without one, nomadService and nomadServices fail the render. */
  services?: NomadServiceSource;
  /** The task's namespace and region, for naming blocked reads as Nomad does. */
  namespace?: string;
  region?: string;
  /** Nomad's template error_on_missing_key. */
  errMissingKey?: boolean;
}

/** A render: the text, and what it is waiting for (empty: complete). */
export interface RenderResult {
  text: string;
  /** Nomad's names of the reads the render waits for, e.g. `nomad.var.block(nomad/jobs/x@default.global)`. */
  blocked: string[];
}

/** A variable's metadata, as consul-template's NomadVarMeta. */
class VarMeta implements TemplateObject {
  constructor(readonly m: VariableMetadata) {}
  field(name: string): unknown {
    switch (name) {
      case 'Namespace':
      case 'Path':
      case 'CreateIndex':
      case 'ModifyIndex':
      case 'CreateTime':
      case 'ModifyTime':
        return this.m[name];
      default:
        return undefined;
    }
  }
  print(): string {
    return this.m.Path;
  }
  truthy(): boolean {
    return true;
  }
}

/** A variable's items, as consul-template's NomadVarItems: a map of key to value, with Keys/Values/Tuples/Parent. */
class VarItems implements TemplateObject {
  private readonly keys: string[];
  constructor(
    private readonly v: Variable | null,
    private readonly errMissingKey: boolean,
  ) {
    this.keys = Object.keys(v?.Items ?? {}).sort();
  }
  private item(k: string): string {
    return this.v!.Items[k]!;
  }
  field(name: string): unknown {
    // Go looks a map type's methods up before its keys.
    switch (name) {
      case 'Keys':
        return [...this.keys];
      case 'Values':
        return this.keys.map((k) => this.item(k));
      case 'Tuples':
        return this.keys.map((k) => new Map<string, unknown>([['Key', k], ['Value', this.item(k)]]));
      case 'Parent':
      case 'Metadata':
        return this.v ? new VarMeta(this.v) : null;
    }
    if (this.v && Object.prototype.hasOwnProperty.call(this.v.Items, name)) return this.item(name);
    if (this.errMissingKey) throw new TemplateRenderError(`map has no entry for key ${JSON.stringify(name)}`);
    return null;
  }
  entries(): [string, unknown][] {
    return this.keys.map((k) => [k, this.item(k)]);
  }
  print(): string {
    return `map[${this.keys.map((k) => `${k}:${this.item(k)}`).join(' ')}]`;
  }
  truthy(): boolean {
    return this.keys.length > 0;
  }
}

function arity(name: string, min: number, max: number, fn: TemplateFn): TemplateFn {
  return (args) => {
    if (args.length < min || args.length > max) {
      throw new TemplateRenderError(`wrong number of args for ${name}: want ${min === max ? min : `${min}-${max}`} got ${args.length}`);
    }
    return fn(args);
  };
}

function str(name: string, v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new TemplateRenderError(`${name}: expected a string, got ${printValue(v)}`);
}

/** `path`, `path@namespace` or `path@namespace.region` → its path and namespace ('' when none). */
export function splitVarPath(arg: string): { path: string; namespace: string } {
  const at = arg.indexOf('@');
  if (at < 0) return { path: arg, namespace: '' };
  const rest = arg.slice(at + 1);
  const dot = rest.indexOf('.');
  return { path: arg.slice(0, at), namespace: dot < 0 ? rest : rest.slice(0, dot) };
}

function compare(name: string, a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  throw new TemplateRenderError(`${name}: incompatible types for comparison`);
}

/** Go's fmt.Sprintf for %s %v %d %q %f %t %x and %%. */
function sprintf(format: string, args: unknown[]): string {
  let i = 0;
  return format.replace(/%([-+ 0#]*)(\d*)(?:\.(\d+))?([svdqftx%])/g, (_m, _flags: string, width: string, prec: string | undefined, verb: string) => {
    if (verb === '%') return '%';
    if (i >= args.length) return `%!${verb}(MISSING)`;
    const a = args[i++];
    let s: string;
    switch (verb) {
      case 'd':
        s = typeof a === 'number' ? String(Math.trunc(a)) : `%!d(${printValue(a)})`;
        break;
      case 'f':
        s = typeof a === 'number' ? a.toFixed(prec === undefined ? 6 : Number(prec)) : `%!f(${printValue(a)})`;
        break;
      case 'q':
        s = JSON.stringify(printValue(a));
        break;
      case 'x':
        s = typeof a === 'number' ? Math.trunc(a).toString(16) : Buffer.from(printValue(a)).toString('hex');
        break;
      default:
        s = printValue(a);
    }
    return width ? s.padStart(Number(width)) : s;
  });
}

/** Renders a template, reporting what it waits for; throws TemplateRenderError for anything it cannot do. */
export function renderTemplateResult(src: string, opts: RenderOptions): RenderResult {
  const env = opts.env;
  const nomad = opts.nomad;
  const errMissingKey = opts.errMissingKey ?? false;
  const blocked: string[] = [];
  const label = (path: string, ns: string): string => `${path}@${ns || opts.namespace || 'default'}.${opts.region || 'global'}`;
  const source = (name: string): NomadVarSource => {
    if (!nomad) throw new TemplateRenderError(`${name}: Nomad variables are not available to this template`);
    return nomad;
  };
  const readVar = (name: string, arg: unknown): { v: Variable | null | undefined; path: string; namespace: string } => {
    const { path, namespace } = splitVarPath(str(name, arg));
    if (path === '') throw new TemplateRenderError(`${name}: missing variable path`);
    return { v: source(name).get(namespace, path), path, namespace };
  };
  const listVars = (name: string, args: unknown[], safe: boolean): VarMeta[] => {
    const { path, namespace } = splitVarPath(args.length ? str(name, args[0]) : '');
    const list = source(name).list(namespace, path);
    if (list === undefined || (safe && list.length === 0)) blocked.push(`nomad.var.list(${label(path, namespace)})`);
    return (list ?? []).map((m) => new VarMeta(m));
  };

  const serviceSource = (name: string): NomadServiceSource => {
    if (!opts.services) throw new TemplateRenderError(`${name}: Nomad services are not available to this template`);
    return opts.services;
  };
  /** nomadService "[tag.]name[@namespace]", or nomadService N "key" "[tag.]name[@namespace]" (consul-template's forms). */
  const nomadService = (args: unknown[]): NomadServiceItem[] => {
    let choose = '';
    let query: string;
    if (args.length === 3) {
      const n = typeof args[0] === 'number' ? args[0] : Number(str('nomadService', args[0]));
      if (!Number.isInteger(n) || n < 1) throw new TemplateRenderError(`nomadService: the count must be a positive integer, got ${printValue(args[0])}`);
      choose = `${n}|${str('nomadService', args[1])}`;
      query = str('nomadService', args[2]);
    } else if (args.length === 1) {
      query = str('nomadService', args[0]);
    } else {
      throw new TemplateRenderError(`nomadService: expected 1 or 3 arguments, got ${args.length}`);
    }
    const q = parseServiceQuery(query);
    const regs = serviceSource('nomadService').service(q.namespace, q.name, q.tag, choose);
    if (regs === undefined) blocked.push(`nomad.service(${query})`);
    return (regs ?? []).map(serviceItem);
  };

  const funcs: Record<string, TemplateFn> = {
    env: arity('env', 1, 1, ([name]) => {
      const n = str('env', name);
      return Object.prototype.hasOwnProperty.call(env, n) ? env[n]! : '';
    }),
    toUpper: arity('toUpper', 1, 1, ([s]) => str('toUpper', s).toUpperCase()),
    toLower: arity('toLower', 1, 1, ([s]) => str('toLower', s).toLowerCase()),
    trimSpace: arity('trimSpace', 1, 1, ([s]) => str('trimSpace', s).trim()),
    split: arity('split', 2, 2, ([sep, s]) => str('split', s).split(str('split', sep))),
    join: arity('join', 2, 2, ([sep, list]) => {
      if (!Array.isArray(list)) throw new TemplateRenderError('join: expected a list');
      return list.map(printValue).join(str('join', sep));
    }),
    replaceAll: arity('replaceAll', 3, 3, ([from, to, s]) => str('replaceAll', s).split(str('replaceAll', from)).join(str('replaceAll', to))),
    contains: arity('contains', 2, 2, ([needle, hay]) => {
      if (Array.isArray(hay)) return hay.some((x) => printValue(x) === printValue(needle));
      if (isTemplateObject(hay) && hay.entries) return hay.entries().some(([k]) => k === printValue(needle));
      return str('contains', hay).includes(str('contains', needle));
    }),
    toJSON: arity('toJSON', 1, 1, ([v]) => JSON.stringify(isTemplateObject(v) && v.entries ? Object.fromEntries(v.entries()) : v)),
    base64Encode: arity('base64Encode', 1, 1, ([s]) => Buffer.from(str('base64Encode', s)).toString('base64')),
    base64Decode: arity('base64Decode', 1, 1, ([s]) => Buffer.from(str('base64Decode', s), 'base64').toString('utf8')),
    // Go builtins.
    not: arity('not', 1, 1, ([v]) => !truthy(v)),
    and: arity('and', 1, Infinity, (args) => args.find((a) => !truthy(a)) ?? args[args.length - 1]),
    or: arity('or', 1, Infinity, (args) => args.find((a) => truthy(a)) ?? args[args.length - 1]),
    eq: arity('eq', 2, Infinity, ([a, ...rest]) => rest.some((b) => compare('eq', a, b) === 0)),
    ne: arity('ne', 2, 2, ([a, b]) => compare('ne', a, b) !== 0),
    lt: arity('lt', 2, 2, ([a, b]) => compare('lt', a, b) < 0),
    le: arity('le', 2, 2, ([a, b]) => compare('le', a, b) <= 0),
    gt: arity('gt', 2, 2, ([a, b]) => compare('gt', a, b) > 0),
    ge: arity('ge', 2, 2, ([a, b]) => compare('ge', a, b) >= 0),
    len: arity('len', 1, 1, ([v]) => {
      if (typeof v === 'string' || Array.isArray(v)) return v.length;
      if (isTemplateObject(v) && v.entries) return v.entries().length;
      if (v instanceof Map) return v.size;
      throw new TemplateRenderError(`len of ${printValue(v)}`);
    }),
    index: arity('index', 2, Infinity, ([v, ...keys]) =>
      keys.reduce((acc: unknown, k) => {
        if (Array.isArray(acc)) {
          if (typeof k !== 'number' || k < 0 || k >= acc.length) throw new TemplateRenderError(`index out of range: ${printValue(k)}`);
          return acc[k] as unknown;
        }
        if (isTemplateObject(acc)) return acc.field(str('index', k)) ?? null;
        if (acc instanceof Map) return (acc.get(k) as unknown) ?? null;
        throw new TemplateRenderError(`can't index item of type ${typeof acc}`);
      }, v),
    ),
    print: (args) => args.map(printValue).join(''),
    println: (args) => args.map(printValue).join(' ') + '\n',
    printf: arity('printf', 1, Infinity, ([f, ...rest]) => sprintf(str('printf', f), rest)),
    // Nomad Variables.
    nomadVar: arity('nomadVar', 1, 1, ([arg]) => {
      // consul-template: an empty path is no variable, not a wait.
      if (arg === '') return new VarItems(null, errMissingKey);
      const r = readVar('nomadVar', arg);
      if (!r.v) blocked.push(`nomad.var.block(${label(r.path, r.namespace)})`);
      return new VarItems(r.v ?? null, errMissingKey);
    }),
    nomadVarExists: arity('nomadVarExists', 1, 1, ([arg]) => {
      if (arg === '') return false;
      const r = readVar('nomadVarExists', arg);
      if (r.v === undefined) blocked.push(`nomad.var.get(${label(r.path, r.namespace)})`);
      return r.v !== null && r.v !== undefined;
    }),
    nomadVarList: arity('nomadVarList', 0, 1, (args) => listVars('nomadVarList', args, false)),
    nomadVarListSafe: arity('nomadVarListSafe', 0, 1, (args) => listVars('nomadVarListSafe', args, true)),
    // Native services.
    nomadService: nomadService,
    nomadServices: arity('nomadServices', 0, 1, (args) => {
      const arg = args.length ? str('nomadServices', args[0]) : '';
      if (arg !== '' && !arg.startsWith('@')) throw new TemplateRenderError(`nomadServices: expected "@<namespace>", got ${JSON.stringify(arg)}`);
      const list = serviceSource('nomadServices').services(arg.slice(1));
      if (list === undefined) blocked.push(`nomad.services(${arg})`);
      return (list ?? []).flatMap((ns) => ns.Services.map((x) => ({ Name: x.ServiceName, Tags: [...x.Tags] })));
    }),
  };
  const nodes = parseTemplate(src, opts.leftDelim || '{{', opts.rightDelim || '}}');
  const text = execTemplate(nodes, null, { funcs, errMissingKey });
  return { text, blocked: [...new Set(blocked)] };
}

/** Renders a template that reads no variables; throws TemplateRenderError for anything outside the supported subset. */
export function renderTemplate(src: string, opts: RenderOptions): string {
  return renderTemplateResult(src, opts).text;
}

/** What nomadService answers per instance: consul-template's NomadService fields. */
interface NomadServiceItem {
  ID: string;
  Name: string;
  Node: string;
  Address: string;
  Port: number;
  Datacenter: string;
  Namespace: string;
  JobID: string;
  AllocID: string;
  Tags: string[];
}

function serviceItem(r: ServiceRegistration): NomadServiceItem {
  return { ID: r.ID, Name: r.ServiceName, Node: r.NodeID, Address: r.Address, Port: r.Port, Datacenter: r.Datacenter, Namespace: r.Namespace, JobID: r.JobID, AllocID: r.AllocID, Tags: [...(r.Tags ?? [])] };
}

/** `[tag.]name[@namespace]`: the tag is what comes before the last dot (service names have none here, as consul-template reads them). */
export function parseServiceQuery(query: string): { tag: string; name: string; namespace: string } {
  const at = query.lastIndexOf('@');
  const namespace = at >= 0 ? query.slice(at + 1) : '';
  const rest = at >= 0 ? query.slice(0, at) : query;
  const dot = rest.lastIndexOf('.');
  const tag = dot >= 0 ? rest.slice(0, dot) : '';
  const name = dot >= 0 ? rest.slice(dot + 1) : rest;
  if (name === '' || !/^[A-Za-z0-9_\-/]+$/.test(name)) throw new TemplateRenderError(`nomadService: invalid service query ${JSON.stringify(query)}`);
  return { tag, name, namespace };
}
