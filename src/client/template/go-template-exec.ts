/**
 * Executes a parsed template (go-template-parse.ts) as Go's text/template does for the values
 * Nomad templates meet: strings, numbers, booleans, nil, lists, maps and records. Truth is Go's
 * (false, 0, nil, "" and empty lists/maps are false); `range` walks a list in order and a map
 * by sorted key; a map's missing key prints "<no value>" (an error with `missingkey=error`);
 * printing follows fmt's %v for these shapes. Values may also be TemplateObjects, whose fields
 * are looked up through `field` (the variable shapes of render-template.ts).
 */
import type { BlockNode, Node, Operand, Pipe } from './go-template-parse.js';
import { TemplateRenderError } from './template-error.js';

/** A value with Go-like fields and methods (a map-like object answers `entries` for range). */
export interface TemplateObject {
  /** The field or method `name` (undefined: none; maps answer their missing keys themselves). */
  field(name: string): unknown;
  /** Key/value pairs in order, when the value ranges like a map. */
  entries?(): [string, unknown][];
  /** How %v prints it. */
  print(): string;
  /** Go truth (a struct is always true). */
  truthy(): boolean;
}

export function isTemplateObject(v: unknown): v is TemplateObject {
  return typeof v === 'object' && v !== null && typeof (v as TemplateObject).field === 'function' && typeof (v as TemplateObject).print === 'function';
}

export type TemplateFn = (args: unknown[]) => unknown;

export interface ExecOptions {
  funcs: Readonly<Record<string, TemplateFn>>;
  /** Nomad's template error_on_missing_key. */
  errMissingKey: boolean;
}

const NO_VALUE = '<no value>';

/** Go's truth of a value. */
export function truthy(v: unknown): boolean {
  if (v === null || v === undefined) return false;
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') return v.length > 0;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (isTemplateObject(v)) return v.truthy();
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** fmt's %v for the value shapes templates meet. */
export function printValue(v: unknown): string {
  if (v === null || v === undefined) return NO_VALUE;
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return `[${v.map(printValue).join(' ')}]`;
  if (isTemplateObject(v)) return v.print();
  if (v instanceof Map) return `map[${[...v.entries()].map(([k, x]) => `${String(k)}:${printValue(x)}`).join(' ')}]`;
  if (typeof v === 'object') {
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${printValue((v as Record<string, unknown>)[k])}`)
      .join(' ')}]`;
  }
  return String(v);
}

class Scope {
  private readonly frames: Map<string, unknown>[] = [new Map()];
  constructor(root: unknown) {
    this.frames[0]!.set('$', root);
  }
  push(): void {
    this.frames.push(new Map());
  }
  pop(): void {
    this.frames.pop();
  }
  declare(name: string, v: unknown): void {
    this.frames[this.frames.length - 1]!.set(name, v);
  }
  assign(name: string, v: unknown): void {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      if (this.frames[i]!.has(name)) {
        this.frames[i]!.set(name, v);
        return;
      }
    }
    throw new TemplateRenderError(`undefined variable: ${name}`);
  }
  get(name: string): unknown {
    for (let i = this.frames.length - 1; i >= 0; i--) if (this.frames[i]!.has(name)) return this.frames[i]!.get(name);
    throw new TemplateRenderError(`undefined variable: ${name}`);
  }
}

/** Executes a tree with `dot` as the root data. */
export function execTemplate(nodes: Node[], dot: unknown, opts: ExecOptions): string {
  const scope = new Scope(dot);
  let out = '';

  const fieldOf = (recv: unknown, name: string): unknown => {
    if (recv === null || recv === undefined) throw new TemplateRenderError(`nil pointer evaluating .${name}`);
    if (isTemplateObject(recv)) {
      const v = recv.field(name);
      if (v === undefined) throw new TemplateRenderError(`can't evaluate field ${name}`);
      return v;
    }
    if (recv instanceof Map) {
      if (recv.has(name)) return recv.get(name) as unknown;
      if (opts.errMissingKey) throw new TemplateRenderError(`map has no entry for key ${JSON.stringify(name)}`);
      return undefined;
    }
    if (typeof recv === 'object' && !Array.isArray(recv)) {
      if (Object.prototype.hasOwnProperty.call(recv, name)) return (recv as Record<string, unknown>)[name];
      if (opts.errMissingKey) throw new TemplateRenderError(`map has no entry for key ${JSON.stringify(name)}`);
      return undefined;
    }
    throw new TemplateRenderError(`can't evaluate field ${name} in type ${typeof recv}`);
  };
  const chainOf = (v: unknown, chain: string[]): unknown => chain.reduce((acc, name) => fieldOf(acc, name), v);

  const operand = (o: Operand, dotv: unknown): unknown => {
    switch (o.k) {
      case 'str':
      case 'num':
      case 'bool':
        return o.v;
      case 'nil':
        return null;
      case 'dot':
        return chainOf(dotv, o.chain);
      case 'var':
        return chainOf(scope.get(o.name), o.chain);
      case 'sub':
        return chainOf(pipe(o.pipe, dotv), o.chain);
      case 'fn':
        return call(o.name, [], dotv);
    }
  };

  const call = (name: string, args: unknown[], _dotv: unknown): unknown => {
    const fn = Object.prototype.hasOwnProperty.call(opts.funcs, name) ? opts.funcs[name] : undefined;
    if (!fn) throw new TemplateRenderError(`unsupported function ${JSON.stringify(name)}`);
    return fn(args);
  };

  const command = (cmd: Operand[], dotv: unknown, piped: { v: unknown } | null): unknown => {
    const head = cmd[0]!;
    if (head.k === 'fn') {
      const args = cmd.slice(1).map((a) => operand(a, dotv));
      if (piped) args.push(piped.v);
      return call(head.name, args, dotv);
    }
    if (cmd.length > 1 || piped) throw new TemplateRenderError(`can't give argument to non-function ${describe(head)}`);
    return operand(head, dotv);
  };

  const pipe = (p: Pipe, dotv: unknown): unknown => {
    let piped: { v: unknown } | null = null;
    for (const cmd of p.cmds) piped = { v: command(cmd, dotv, piped) };
    const v = piped?.v;
    if (p.decl.length === 1) {
      if (p.assign) scope.assign(p.decl[0]!, v);
      else scope.declare(p.decl[0]!, v);
    }
    return v;
  };

  const list = (nodes: Node[], dotv: unknown): void => {
    for (const n of nodes) {
      switch (n.k) {
        case 'text':
          out += n.v;
          break;
        case 'action': {
          const v = pipe(n.pipe, dotv);
          // A declaration prints nothing.
          if (n.pipe.decl.length === 0) out += printValue(v);
          break;
        }
        case 'if':
        case 'with': {
          scope.push();
          const v = pipe(n.pipe, dotv);
          if (truthy(v)) list(n.list, n.k === 'with' ? v : dotv);
          else if (n.elseList) list(n.elseList, dotv);
          scope.pop();
          break;
        }
        case 'range':
          range(n, dotv);
          break;
      }
    }
  };

  const range = (n: BlockNode, dotv: unknown): void => {
    scope.push();
    const decl = n.pipe.decl;
    const v = pipe({ ...n.pipe, decl: [] }, dotv);
    let items: [unknown, unknown][];
    if (v === null || v === undefined) items = [];
    else if (Array.isArray(v)) items = v.map((x, i) => [i, x]);
    else if (isTemplateObject(v) && v.entries) items = v.entries();
    else if (v instanceof Map) items = [...v.entries()].sort(([a], [b]) => (String(a) < String(b) ? -1 : 1));
    else if (typeof v === 'number' && Number.isInteger(v)) items = Array.from({ length: Math.max(0, v) }, (_, i) => [i, i]);
    else if (typeof v === 'object' && !isTemplateObject(v))
      items = Object.keys(v)
        .sort()
        .map((k) => [k, (v as Record<string, unknown>)[k]]);
    else throw new TemplateRenderError(`range can't iterate over ${printValue(v)}`);
    if (items.length === 0) {
      if (n.elseList) list(n.elseList, dotv);
    } else {
      for (const [k, x] of items) {
        scope.push();
        if (decl.length === 1) scope.declare(decl[0]!, x);
        if (decl.length === 2) {
          scope.declare(decl[0]!, k);
          scope.declare(decl[1]!, x);
        }
        list(n.list, x);
        scope.pop();
      }
    }
    scope.pop();
  };

  list(nodes, dot);
  return out;
}

function describe(o: Operand): string {
  switch (o.k) {
    case 'str':
      return JSON.stringify(o.v);
    case 'num':
    case 'bool':
      return String(o.v);
    case 'nil':
      return 'nil';
    case 'dot':
      return o.chain.length ? `.${o.chain.join('.')}` : '.';
    case 'var':
      return [o.name, ...o.chain].join('.');
    case 'fn':
      return o.name;
    case 'sub':
      return '(…)';
  }
}
