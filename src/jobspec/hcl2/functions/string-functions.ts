/**
 * cty's string functions as Nomad's jobspec2 exposes them: case, trimming, splitting and
 * joining, substrings by grapheme, `format`/`formatlist` (Go's verbs) and the regex-based
 * `replace`/`regex_replace`.
 */
import type { HclValue } from '../expression-ast.js';
import type { EvalBudget } from '../eval-budget.js';
import type { HclFunction } from '../expression-evaluator.js';
import { evalError } from '../hcl-eval-error.js';
import { isHclObject, numberToString, toInt, toList, toNum, toStr, typeName } from '../hcl-value.js';
import { defineFunction } from './define-function.js';
import { boundedRegex } from './bounded-regex.js';
import { jsonEncode } from './json-codec.js';

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** A string's grapheme clusters (what cty counts as characters). */
export function graphemes(s: string): string[] {
  return Array.from(segmenter.segment(s), (x) => x.segment);
}

/** Largest width or precision `format` accepts; more is a hostile allocation. */
const MAX_FORMAT_WIDTH = 10_000;

function pad(s: string, width: number | undefined, left: boolean, zero: boolean): string {
  if (width === undefined || s.length >= width) return s;
  if (left) return s.padEnd(width, ' ');
  if (zero) {
    const sign = /^[+-]/.test(s) ? s[0]! : '';
    return sign + s.slice(sign.length).padStart(width - sign.length, '0');
  }
  return s.padStart(width, ' ');
}

function formatOne(verb: string, flags: string, width: number | undefined, prec: number | undefined, v: HclValue): string {
  const plus = flags.includes('+');
  const space = flags.includes(' ');
  const signed = (n: number, s: string): string => (n >= 0 && plus ? `+${s}` : n >= 0 && space ? ` ${s}` : s);
  let s: string;
  switch (verb) {
    case 'v':
      s = flags.includes('#') || typeof v === 'object' ? jsonEncode(v) : toStr(v);
      break;
    case 's':
      if (v !== null && typeof v === 'object') throw evalError(`unsupported value for "%s": ${typeName(v)}`);
      s = toStr(v);
      if (prec !== undefined) s = graphemes(s).slice(0, prec).join('');
      break;
    case 'q':
      s = JSON.stringify(toStr(v));
      break;
    case 't':
      if (typeof v !== 'boolean' && v !== 'true' && v !== 'false') throw evalError(`unsupported value for "%t": ${typeName(v)}`);
      s = String(v);
      break;
    case 'd': {
      const n = toNum(v);
      if (!Number.isInteger(n)) throw evalError(`unsupported value for "%d": ${n} is not a whole number`);
      s = signed(n, numberToString(n));
      break;
    }
    case 'b':
    case 'o':
    case 'x':
    case 'X': {
      const n = toInt(v);
      s = Math.abs(n).toString(verb === 'b' ? 2 : verb === 'o' ? 8 : 16);
      if (verb === 'X') s = s.toUpperCase();
      if (n < 0) s = `-${s}`;
      break;
    }
    case 'e':
    case 'E': {
      const n = toNum(v);
      s = n.toExponential(prec ?? 6).replace(/e([+-])(\d)$/, 'e$10$2');
      if (verb === 'E') s = s.toUpperCase();
      s = signed(n, s);
      break;
    }
    case 'f':
    case 'F': {
      const n = toNum(v);
      s = signed(n, n.toFixed(prec ?? 6));
      break;
    }
    case 'g':
    case 'G': {
      const n = toNum(v);
      s = signed(n, prec !== undefined ? String(Number(n.toPrecision(Math.max(prec, 1)))) : String(n));
      break;
    }
    default:
      throw evalError(`unrecognized format verb "%${verb}"`);
  }
  return pad(s, width, flags.includes('-'), flags.includes('0') && verb !== 's' && verb !== 'q');
}

/** Go's fmt verbs as cty's `format` takes them: `%[n]` argument indexes, flags, width, precision. */
export function formatString(spec: string, args: HclValue[], budget: EvalBudget): string {
  const re = /%(?:(%)|(?:\[(\d+)\])?([-+# 0]*)(\d+)?(?:\.(\d+))?([a-zA-Z]))/g;
  let next = 0;
  let out = '';
  let last = 0;
  for (let m = re.exec(spec); m; m = re.exec(spec)) {
    out += spec.slice(last, m.index);
    last = re.lastIndex;
    if (m[1]) {
      out += '%';
      continue;
    }
    const idx = m[2] !== undefined ? Number(m[2]) - 1 : next;
    next = idx + 1;
    if (idx < 0 || idx >= args.length) throw evalError(`not enough arguments for "${m[0]}" at offset ${m.index}`);
    const width = m[4] !== undefined ? Number(m[4]) : undefined;
    const prec = m[5] !== undefined ? Number(m[5]) : undefined;
    if ((width ?? 0) > MAX_FORMAT_WIDTH || (prec ?? 0) > MAX_FORMAT_WIDTH) {
      throw evalError(`format width or precision over ${MAX_FORMAT_WIDTH} in "${m[0]}"`);
    }
    const arg = args[idx]!;
    if (arg === null) throw evalError(`unsupported value for "${m[0]}" at ${m.index}: null value cannot be formatted`);
    out += formatOne(m[6]!, m[3] ?? '', width, prec, arg);
    budget.string(out.length);
  }
  out += spec.slice(last);
  if (next < args.length && !/%\[\d+\]/.test(spec)) throw evalError(`too many arguments; only ${next} used by format string`);
  return out;
}

function formatlist(args: HclValue[], budget: EvalBudget): HclValue {
  const spec = toStr(args[0]!, 'format');
  const rest = args.slice(1);
  let n: number | undefined;
  for (const a of rest) {
    if (!Array.isArray(a)) continue;
    if (n !== undefined && a.length !== n) throw evalError(`all list arguments must have the same length, got ${n} and ${a.length}`);
    n = a.length;
  }
  const count = n ?? 1;
  budget.collection(count);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(formatString(spec, rest.map((a) => (Array.isArray(a) ? a[i]! : a)), budget));
  return out;
}

function trimCutset(s: string, cutset: string, left: boolean, right: boolean): string {
  const set = new Set(Array.from(cutset));
  const chars = Array.from(s);
  let a = 0;
  let b = chars.length;
  if (left) while (a < b && set.has(chars[a]!)) a++;
  if (right) while (b > a && set.has(chars[b - 1]!)) b--;
  return chars.slice(a, b).join('');
}

/** Go's replacement syntax (`$1`, `${1}`, `${name}`) is what JS accepts apart from `${name}`. */
function goReplacement(rep: string): string {
  return rep.replace(/\$\{(\w+)\}/g, (_m, n: string) => (/^\d+$/.test(n) ? `$${n}` : `$<${n}>`));
}

function replace(args: HclValue[], budget: EvalBudget): HclValue {
  const s = toStr(args[0]!, 'string');
  const sub = toStr(args[1]!, 'substring');
  const rep = toStr(args[2]!, 'replacement');
  if (sub.length > 1 && sub.startsWith('/') && sub.endsWith('/')) {
    return boundedRegex(sub.slice(1, -1)).replaceAll(s, goReplacement(rep), budget);
  }
  return s.split(sub).join(rep);
}

function substr(args: HclValue[]): HclValue {
  const chars = graphemes(toStr(args[0]!, 'string'));
  let offset = toInt(args[1]!, 'offset');
  let length = toInt(args[2]!, 'length');
  if (offset < 0) offset = Math.max(0, chars.length + offset);
  if (offset > chars.length) throw evalError('offset is out of range');
  if (length < 0) length = chars.length - offset;
  return chars.slice(offset, offset + length).join('');
}

function join(args: HclValue[]): HclValue {
  const sep = toStr(args[0]!, 'separator');
  const items: string[] = [];
  for (const [i, list] of args.slice(1).entries()) {
    for (const v of toList(list, `list ${i + 1}`)) {
      if (v === null) throw evalError(`element of list ${i + 1} is null; cannot concatenate null values`);
      if (typeof v === 'object') throw evalError(`element of list ${i + 1} must be a string, got ${typeName(v)}`);
      items.push(toStr(v));
    }
  }
  return items.join(sep);
}

function reverse(args: HclValue[]): HclValue {
  const v = args[0]!;
  // Nomad maps both names to cty's string reverse; a list is reversed too, as users expect.
  if (Array.isArray(v)) return [...v].reverse();
  if (isHclObject(v)) throw evalError('reverse() takes a string or a list');
  return graphemes(toStr(v)).reverse().join('');
}

/** String functions by name. */
export const STRING_FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  chomp: defineFunction(1, 1, ([s]) => toStr(s!).replace(/(\r?\n)+$/, '')),
  format: defineFunction(1, Infinity, (args, budget) => formatString(toStr(args[0]!, 'format'), args.slice(1), budget)),
  formatlist: defineFunction(1, Infinity, formatlist),
  indent: defineFunction(2, 2, ([n, s]) => {
    const spaces = ' '.repeat(Math.min(toInt(n!, 'spaces'), MAX_FORMAT_WIDTH));
    return toStr(s!).split('\n').join(`\n${spaces}`);
  }),
  join: defineFunction(2, Infinity, join),
  lower: defineFunction(1, 1, ([s]) => toStr(s!).toLowerCase()),
  upper: defineFunction(1, 1, ([s]) => toStr(s!).toUpperCase()),
  replace: defineFunction(3, 3, replace),
  regex_replace: defineFunction(3, 3, ([s, pattern, rep], budget) =>
    boundedRegex(toStr(pattern!, 'pattern')).replaceAll(toStr(s!), goReplacement(toStr(rep!)), budget),
  ),
  split: defineFunction(2, 2, ([sep, s]) => toStr(s!).split(toStr(sep!, 'separator'))),
  strlen: defineFunction(1, 1, ([s]) => graphemes(toStr(s!)).length),
  strrev: defineFunction(1, 1, ([s]) => graphemes(toStr(s!)).reverse().join('')),
  reverse: defineFunction(1, 1, reverse),
  substr: defineFunction(3, 3, substr),
  title: defineFunction(1, 1, ([s]) => toStr(s!).replace(/(^|[^\p{L}\p{N}'])(\p{L})/gu, (_m, pre: string, c: string) => pre + c.toUpperCase())),
  trim: defineFunction(2, 2, ([s, cut]) => trimCutset(toStr(s!), toStr(cut!, 'cutset'), true, true)),
  trimprefix: defineFunction(2, 2, ([s, p]) => {
    const str = toStr(s!);
    const prefix = toStr(p!, 'prefix');
    return str.startsWith(prefix) ? str.slice(prefix.length) : str;
  }),
  trimsuffix: defineFunction(2, 2, ([s, p]) => {
    const str = toStr(s!);
    const suffix = toStr(p!, 'suffix');
    return suffix && str.endsWith(suffix) ? str.slice(0, str.length - suffix.length) : str;
  }),
  trimspace: defineFunction(1, 1, ([s]) => toStr(s!).trim()),
};
