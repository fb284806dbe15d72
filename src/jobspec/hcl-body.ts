/**
 * A typed reader over one block of hcl2json output. hcl2json turns attributes into plain
 * values, unlabelled blocks into arrays of objects and labelled blocks into
 * `{label: [object, …]}`. Every getter marks its key as known; `finish()` reports the keys
 * nobody asked for as unknown attributes or blocks, naming the line.
 */
import { DurationParseError, parseDuration, type Nanos } from '../structs/duration.js';
import { didYouMean } from '../structs/name-suggestion.js';
import type { DecodeContext } from './decode-context.js';

type Raw = Record<string, unknown>;

/** A labelled block read from the body: its label and its own reader. */
export interface LabelledBlock {
  label: string;
  body: HclBody;
}

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Renders a value the way HCL converts primitives to strings. */
function primitiveToString(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** Reads the attributes and blocks of one HCL block, recording problems in the context. */
export class HclBody {
  private readonly used = new Set<string>();

  constructor(
    private readonly raw: Raw,
    /** Where the block is, e.g. `job "web": group "api"`. */
    readonly path: string,
    readonly ctx: DecodeContext,
    /** Offset in the source of the block's header, so line lookups find this block's keys. */
    readonly offset: number,
  ) {}

  private child(segment: string): string {
    return this.path ? `${this.path}: ${segment}` : segment;
  }

  /** True when the key is present (attribute or block). */
  has(key: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.raw, key);
  }

  /** The raw value of a key, marking it known. */
  rawValue(key: string): unknown {
    this.used.add(key);
    return this.raw[key];
  }

  /** Records a problem about `key` of this block. */
  problem(key: string, message: string): void {
    this.ctx.report(this.path, message, key, this.offset);
  }

  private attr(key: string): unknown {
    this.used.add(key);
    const v = this.raw[key];
    if (v === undefined) return undefined;
    if (Array.isArray(v) && v.length > 0 && v.every(isObject) && !this.isAttrList(key)) {
      this.problem(key, `"${key}" must be an attribute (${key} = …), not a block`);
      return undefined;
    }
    return v;
  }

  /** hcl2json cannot tell `x = [{…}]` from `x {…}`; only look at the source when in doubt. */
  private isAttrList(key: string): boolean {
    const at = this.ctx.offsetOf(key, this.offset);
    if (at < 0) return true;
    const after = this.ctx.source.slice(at + key.length).trimStart();
    return after.startsWith('=') || after.startsWith(':') || after.startsWith('"');
  }

  /** A string attribute; numbers and bools convert as HCL does. */
  string(key: string): string | undefined {
    const v = this.attr(key);
    if (v === undefined || v === null) return undefined;
    const s = primitiveToString(v);
    if (s === undefined) this.problem(key, `"${key}" must be a string`);
    return s;
  }

  /** A number attribute; numeric strings convert. With `integer`, fractions are problems. */
  number(key: string, integer = true): number | undefined {
    const v = this.attr(key);
    if (v === undefined || v === null) return undefined;
    const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
    if (!Number.isFinite(n)) {
      this.problem(key, `"${key}" must be a number, got ${JSON.stringify(v)}`);
      return undefined;
    }
    if (integer && !Number.isInteger(n)) {
      this.problem(key, `"${key}" must be a whole number, got ${n}`);
      return undefined;
    }
    return n;
  }

  /** A bool attribute; "true"/"false" strings convert. */
  bool(key: string): boolean | undefined {
    const v = this.attr(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'boolean') return v;
    if (v === 'true') return true;
    if (v === 'false') return false;
    this.problem(key, `"${key}" must be true or false, got ${JSON.stringify(v)}`);
    return undefined;
  }

  /** A duration attribute ("15s", "1h30m") in nanoseconds. */
  duration(key: string): Nanos | undefined {
    const v = this.attr(key);
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (typeof v === 'string') {
      try {
        return parseDuration(v);
      } catch (e) {
        if (!(e instanceof DurationParseError)) throw e;
      }
    }
    this.problem(key, `"${key}" must be a duration such as "30s" or "1h30m", got ${JSON.stringify(v)}`);
    return undefined;
  }

  /** A list of strings; a single string is taken as a one-element list. */
  stringList(key: string): string[] | undefined {
    const v = this.attr(key);
    if (v === undefined || v === null) return undefined;
    const list = Array.isArray(v) ? v : [v];
    const out: string[] = [];
    for (const item of list) {
      const s = primitiveToString(item);
      if (s === undefined) {
        this.problem(key, `"${key}" must be a list of strings`);
        return undefined;
      }
      out.push(s);
    }
    return out;
  }

  /**
   * A map of strings written either as a block (`meta { a = "b" }`) or an attribute
   * (`meta = { a = "b" }`); values convert to strings.
   */
  stringMap(key: string): Record<string, string> | undefined {
    this.used.add(key);
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    const parts = Array.isArray(v) ? v : [v];
    const out: Record<string, string> = {};
    for (const part of parts) {
      if (!isObject(part)) {
        this.problem(key, `"${key}" must be a map of strings`);
        return undefined;
      }
      for (const [k, val] of Object.entries(part)) {
        const s = primitiveToString(val);
        if (s === undefined) {
          this.problem(key, `"${key}.${k}" must be a string`);
          continue;
        }
        out[k] = s;
      }
    }
    return out;
  }

  /**
   * A free-form map such as a task's `config`: the block's attributes as they are, nested
   * blocks as lists of maps (HCL's decoding of repeated blocks).
   */
  freeMap(key: string): Record<string, unknown> | undefined {
    this.used.add(key);
    const v = this.raw[key];
    if (v === undefined || v === null) return undefined;
    const parts = Array.isArray(v) ? v : [v];
    if (parts.length > 1) this.problem(key, `only one "${key}" block is allowed`);
    const first = parts[0];
    if (!isObject(first)) {
      this.problem(key, `"${key}" must be a block`);
      return undefined;
    }
    return first;
  }

  /** All unlabelled blocks named `key` (possibly none). */
  blocks(key: string): HclBody[] {
    this.used.add(key);
    const v = this.raw[key];
    if (v === undefined || v === null) return [];
    const parts = Array.isArray(v) ? v : [v];
    const out: HclBody[] = [];
    let from = this.offset;
    for (const part of parts) {
      if (!isObject(part)) {
        this.problem(key, `"${key}" must be a block`);
        continue;
      }
      const at = this.ctx.offsetOf(key, from);
      out.push(new HclBody(part, this.child(key), this.ctx, at < 0 ? this.offset : at));
      if (at >= 0) from = at + key.length;
    }
    return out;
  }

  /** The single unlabelled block `key`, or undefined; repeating it is a problem. */
  block(key: string): HclBody | undefined {
    const all = this.blocks(key);
    if (all.length > 1) this.problem(key, `only one "${key}" block is allowed`);
    return all[0];
  }

  /** Labelled blocks `key "label" {…}` in source order; a repeated label is a problem. */
  labelled(key: string): LabelledBlock[] {
    this.used.add(key);
    const v = this.raw[key];
    if (v === undefined || v === null) return [];
    if (!isObject(v)) {
      this.problem(key, `"${key}" blocks need a label: ${key} "name" { … }`);
      return [];
    }
    const out: (LabelledBlock & { at: number })[] = [];
    for (const [label, bodies] of Object.entries(v)) {
      const list = Array.isArray(bodies) ? bodies : [bodies];
      if (list.length > 1) this.problem(key, `duplicate ${key} "${label}"`);
      const body = list[0];
      if (!isObject(body)) {
        this.problem(key, `${key} "${label}" must be a block`);
        continue;
      }
      const at = this.ctx.offsetOf(key, this.offset, label);
      out.push({
        label,
        at,
        body: new HclBody(body, this.child(`${key} "${label}"`), this.ctx, at < 0 ? this.offset : at),
      });
    }
    // hcl2json sorts labels; the source order is what the user wrote (task order matters).
    out.sort((a, b) => (a.at < 0 || b.at < 0 ? 0 : a.at - b.at));
    return out.map(({ label, body }) => ({ label, body }));
  }

  /**
   * Reports every key no getter asked for as unknown, with the closest name a getter did ask
   * for as Nomad's "Did you mean" (the getters are the block's schema). Call once, after
   * reading the block.
   */
  finish(): void {
    for (const key of Object.keys(this.raw)) {
      if (this.used.has(key)) continue;
      const v = this.raw[key];
      const kind = Array.isArray(v) && v.every(isObject) && v.length > 0 ? 'block' : isObject(v) ? 'block' : 'attribute';
      this.problem(key, `unknown ${kind} "${key}".${didYouMean(key, this.used)}`.replace(/\.$/, ''));
    }
  }
}
