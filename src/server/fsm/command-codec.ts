/**
 * The log's text form of a command. Plain JSON, except that a plan's placed allocations are
 * packed: fields whose value is the same for every allocation (the same object, or an equal
 * primitive) are written once, the others as one positional row per allocation — so a plan of
 * 1,000 placements does not repeat 1,000 times the key names, the evaluation, the job and the
 * shared resources. Nested objects that vary (the placement metrics) are packed the same way.
 *
 * decodeCommand(encodeCommand(c)) equals c up to key order.
 */
import type { Allocation } from '../../structs/index.js';
import type { ApplyPlanResultsCommand, Command } from './commands.js';
import { LoopSlice } from '../../scheduler/loop-slice.js';

/** Objects packed as shared fields plus one positional row each. */
export interface Packed {
  /** Fields with the same value in every object. */
  c: Record<string, unknown>;
  /** The names of the varying fields, in row order. */
  f: string[];
  /** Indexes (into f) of varying fields packed one level deeper; their row slot holds an index into n. */
  p: number[];
  /** The nested packings, one per entry of p. */
  n: Packed[];
  /** One row per object. */
  r: unknown[][];
  /**
   * Dictionaries of varying fields with few distinct values, by field index (into f): the
   * field's row slot holds an index into its dictionary. Absent in payloads written before
   * dictionaries existed.
   */
  d?: Record<string, unknown[]>;
}

/** The packed form of ApplyPlanResults on the log. */
type PackedPlanResults = Omit<ApplyPlanResultsCommand, 'AllocsUpdated'> & { AllocsUpdated?: undefined; PackedAllocs: Packed };

/** Fewer allocations than this are written as plain JSON. */
const PACK_MIN = 4;
/** Fields with at most one distinct value per this many rows are dictionary-encoded... */
const DICT_MAX_SHARE = 4;
/** ...in batches of at least this many rows. */
const DICT_MIN_ROWS = 8;
/** How deep varying objects are packed (allocation → Metrics). */
const PACK_DEPTH = 1;

/** How many objects packing goes through between two chances to yield (prepareCommand). */
const STEP = 512;

/** Payloads encoded ahead of their append by prepareCommand, by command object. */
const prepared = new WeakMap<Command, string>();

/** The log payload of a command. */
export function encodeCommand(cmd: Command): string {
  const ready = prepared.get(cmd);
  if (ready !== undefined) return ready;
  if (cmd.Type === 'ApplyPlanResults' && cmd.AllocsUpdated.length >= PACK_MIN) {
    const out = drive(packPlanSteps(cmd));
    if (out) return JSON.stringify(out);
  }
  return JSON.stringify(cmd);
}

/**
 * Encodes a plan's command ahead of its append, giving the event loop back between parts
 * (loop-slice.ts): packing and writing 10,000 placements holds the loop for 0.1–0.3 s in one
 * go. encodeCommand of the same object then answers the payload at once; the command must not
 * change after this. The payload is the one encodeCommand writes, byte for byte.
 */
export async function prepareCommand(cmd: Command, sliceMs?: number): Promise<void> {
  if (cmd.Type !== 'ApplyPlanResults' || cmd.AllocsUpdated.length < PACK_MIN) return;
  const slice = new LoopSlice(sliceMs);
  const steps = packPlanSteps(cmd);
  let out: PackedPlanResults | null;
  for (;;) {
    const r = steps.next();
    if (r.done) {
      out = r.value;
      break;
    }
    const y = slice.maybeYield();
    if (y) await y;
  }
  if (!out) return;
  const text = stringifySteps(out);
  for (;;) {
    const r = text.next();
    if (r.done) {
      prepared.set(cmd, r.value);
      return;
    }
    const y = slice.maybeYield();
    if (y) await y;
  }
}

/** Runs steps to the end without yielding. */
function drive<T>(steps: Generator<void, T, void>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** The packed form of a plan's command, or null when its allocations do not pack. */
function* packPlanSteps(cmd: ApplyPlanResultsCommand): Generator<void, PackedPlanResults | null, void> {
  const packed = yield* packSteps(cmd.AllocsUpdated as unknown as Record<string, unknown>[], PACK_DEPTH);
  return packed ? { ...cmd, AllocsUpdated: undefined, PackedAllocs: packed } : null;
}

/**
 * JSON.stringify(out), written a part at a time: the row lists (nearly all of the text) are
 * written STEP rows per step and spliced into the rest, which is written with a marker in
 * their place. The same text as JSON.stringify: an array's JSON is its elements' JSON joined
 * by commas.
 */
function* stringifySteps(out: PackedPlanResults): Generator<void, string, void> {
  const nonce = `${Date.now().toString(36)}${Math.random().toString(36).slice(2)}`;
  const lists: unknown[][][] = [];
  const swap = (pk: Packed): Packed => {
    const marker = `\u0000rows:${nonce}:${lists.length}`;
    lists.push(pk.r);
    return { ...pk, n: pk.n.map(swap), r: marker as unknown as unknown[][] };
  };
  const skeleton = JSON.stringify({ ...out, PackedAllocs: swap(out.PackedAllocs) });
  yield;
  let text = skeleton;
  for (let i = 0; i < lists.length; i++) {
    const rows = lists[i]!;
    const parts: string[] = [];
    for (let j = 0; j < rows.length; j += STEP) {
      parts.push(JSON.stringify(rows.slice(j, j + STEP)).slice(1, -1));
      yield;
    }
    const marker = JSON.stringify(`\u0000rows:${nonce}:${i}`);
    const at = text.indexOf(marker);
    if (at < 0) throw new Error('packed objects: row list marker lost');
    text = `${text.slice(0, at)}[${parts.join(',')}]${text.slice(at + marker.length)}`;
  }
  return text;
}

/** The command of a log payload (either form). */
export function decodeCommand(payload: string): Command {
  const raw = JSON.parse(payload) as Command | PackedPlanResults;
  if (raw.Type === 'ApplyPlanResults' && 'PackedAllocs' in raw && raw.PackedAllocs) {
    const { PackedAllocs, ...rest } = raw;
    return { ...rest, AllocsUpdated: unpack(PackedAllocs) as unknown as Allocation[] };
  }
  return raw as Command;
}

/** Plain data objects only: an instance of a class (one with toJSON, say) is written as JSON writes it. */
function isPlainObject(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Packs objects that all have the keys of the first (and no others); null when they don't, so
 * the caller writes them plainly. Sameness is identity (===), which is cheap: the scheduler
 * shares objects such as a group's resources between the allocations it builds.
 */
function pack(objs: Record<string, unknown>[], depth: number): Packed | null {
  return drive(packSteps(objs, depth));
}

/** pack, a step (about STEP objects' work) at a time. */
function* packSteps(objs: Record<string, unknown>[], depth: number): Generator<void, Packed | null, void> {
  const first = objs[0]!;
  const keys = Object.keys(first);
  for (let j = 0; j < objs.length; j++) {
    const o = objs[j]!;
    let n = 0;
    for (const k in o) {
      if (!(k in first) || o[k] === undefined) return null;
      n++;
    }
    if (n !== keys.length) return null;
    if (j % STEP === STEP - 1) yield;
  }
  const c: Record<string, unknown> = {};
  const f: string[] = [];
  for (const k of keys) {
    const v = first[k];
    let same = true;
    for (const o of objs) {
      if (o[k] !== v) {
        same = false;
        break;
      }
    }
    if (same) c[k] = v;
    else f.push(k);
    if (same && objs.length >= STEP) yield;
  }
  // A field with few distinct values (the same resources object for every allocation of a
  // job, its evaluation ID, a handful of nodes) is written once per distinct value: smaller to
  // write and parse, and the decoded objects share those values instead of holding copies.
  let d: Record<string, unknown[]> | undefined;
  const dict = new Map<number, Map<unknown, number>>();
  if (objs.length >= DICT_MIN_ROWS) {
    for (let i = 0; i < f.length; i++) {
      const k = f[i]!;
      const ids = new Map<unknown, number>();
      let few = true;
      for (const o of objs) {
        const v = o[k];
        if (!ids.has(v)) {
          ids.set(v, ids.size);
          if (ids.size * DICT_MAX_SHARE > objs.length) {
            few = false;
            break;
          }
        }
      }
      if (few) {
        dict.set(i, ids);
        (d ??= {})[String(i)] = [...ids.keys()];
      }
      if (objs.length >= STEP) yield;
    }
  }
  const p: number[] = [];
  const n: Packed[] = [];
  const nested = new Map<number, number>();
  if (depth > 0) {
    for (let i = 0; i < f.length; i++) {
      if (dict.has(i)) continue;
      const k = f[i]!;
      const vals = objs.map((o) => o[k]);
      if (!vals.every(isPlainObject)) continue;
      const inner = yield* packSteps(vals as Record<string, unknown>[], depth - 1);
      if (!inner) continue;
      nested.set(i, n.length);
      p.push(i);
      n.push(inner);
    }
  }
  const r: unknown[][] = new Array<unknown[]>(objs.length);
  for (let j = 0; j < objs.length; j++) {
    const o = objs[j]!;
    const row = new Array<unknown>(f.length);
    for (let i = 0; i < f.length; i++) {
      const ids = dict.get(i);
      row[i] = ids ? ids.get(o[f[i]!]) : nested.has(i) ? j : o[f[i]!];
    }
    r[j] = row;
    if (j % STEP === STEP - 1) yield;
  }
  return d ? { c, f, p, n, r, d } : { c, f, p, n, r };
}

function unpack(pk: Packed): Record<string, unknown>[] {
  // Nested and dictionary fields alike: the row slot is an index into a list of values.
  const inner: (unknown[] | null)[] = pk.f.map(() => null);
  pk.p.forEach((fieldIndex, i) => (inner[fieldIndex] = unpack(pk.n[i]!)));
  if (pk.d) {
    for (const [at, values] of Object.entries(pk.d)) {
      const i = Number(at);
      if (!Number.isInteger(i) || i < 0 || i >= pk.f.length || !Array.isArray(values)) throw new Error(`packed objects: bad dictionary ${at}`);
      inner[i] = values;
    }
  }
  const sharedKeys = Object.keys(pk.c);
  const sharedValues = sharedKeys.map((k) => pk.c[k]);
  const build = builderFor(sharedKeys, pk.f, inner.map((x) => x !== null));
  const out = new Array<Record<string, unknown>>(pk.r.length);
  for (let j = 0; j < pk.r.length; j++) out[j] = build(sharedValues, pk.r[j]!, inner);
  return out;
}

/** Builds one unpacked object: shared values, its row, the nested unpacked objects by field. */
type Builder = (shared: unknown[], row: unknown[], nested: (unknown[] | null)[]) => Record<string, unknown>;

const builders = new Map<string, Builder>();
/** Layouts kept compiled; past this the cache starts over (layouts are few in practice). */
const MAX_BUILDERS = 256;

/**
 * The builder of one packed layout (shared keys, row fields, which fields are nested), compiled
 * once to a function returning an object literal. Assigning 30 computed keys one by one goes
 * through V8's generic keyed stores and leaves every object with an out-of-object property
 * array; a literal of known keys builds an object of a fixed shape with its fields inline —
 * several times faster when a million allocations are restored, and smaller. Keys are written as
 * JSON string literals; "__proto__" (which a literal would take as the prototype) is refused.
 */
function builderFor(sharedKeys: string[], fields: string[], nested: boolean[]): Builder {
  const layout = JSON.stringify([sharedKeys, fields, nested]);
  let b = builders.get(layout);
  if (b) return b;
  const parts: string[] = [];
  const seen = new Set<string>();
  const key = (k: string): string => {
    if (typeof k !== 'string' || k === '__proto__' || seen.has(k)) throw new Error(`packed objects: bad field name ${JSON.stringify(k)}`);
    seen.add(k);
    return JSON.stringify(k);
  };
  sharedKeys.forEach((k, i) => parts.push(`${key(k)}: s[${i}]`));
  fields.forEach((k, i) => parts.push(`${key(k)}: ${nested[i] ? `n[${i}][r[${i}]]` : `r[${i}]`}`));
  b = new Function('s', 'r', 'n', `"use strict"; return {${parts.join(', ')}};`) as Builder;
  if (builders.size >= MAX_BUILDERS) builders.clear();
  builders.set(layout, b);
  return b;
}

/**
 * Packs plain objects as the plan codec does (shared fields once, positional rows), for other
 * bulk writers such as state snapshots; null when they don't all have the same keys.
 */
export function packObjects(objs: Record<string, unknown>[], depth = PACK_DEPTH): Packed | null {
  return objs.length === 0 ? null : pack(objs, depth);
}

/** The objects of a packObjects result. */
export function unpackObjects(pk: Packed): Record<string, unknown>[] {
  return unpack(pk);
}
