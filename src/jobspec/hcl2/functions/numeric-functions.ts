/** cty's numeric functions: abs, ceil, floor, log, max, min, parseint, pow, signum. */
import type { HclFunction } from '../expression-evaluator.js';
import { evalError } from '../hcl-eval-error.js';
import { toInt, toNum, toStr } from '../hcl-value.js';
import { defineFunction } from './define-function.js';

const DIGITS = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** parseint(string, base): bases 2–62, digits beyond 9 as a–z then A–Z (case-insensitive to 36). */
function parseInt(s: string, base: number): number {
  if (base < 2 || base > 62) throw evalError(`base must be a whole number between 2 and 62, got ${base}`);
  let text = s;
  let sign = 1;
  if (text.startsWith('-') || text.startsWith('+')) {
    sign = text.startsWith('-') ? -1 : 1;
    text = text.slice(1);
  }
  if (text === '') throw evalError(`cannot parse ${JSON.stringify(s)} as a base ${base} integer`);
  let n = 0;
  for (const c of text) {
    let d = DIGITS.indexOf(base <= 36 ? c.toLowerCase() : c);
    if (d < 0 || d >= base) d = -1;
    if (d < 0) throw evalError(`cannot parse ${JSON.stringify(s)} as a base ${base} integer`);
    n = n * base + d;
  }
  return sign * n;
}

/** Numeric functions by name. */
export const NUMERIC_FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  abs: defineFunction(1, 1, ([n]) => Math.abs(toNum(n!))),
  ceil: defineFunction(1, 1, ([n]) => Math.ceil(toNum(n!))),
  floor: defineFunction(1, 1, ([n]) => Math.floor(toNum(n!))),
  log: defineFunction(2, 2, ([n, base]) => Math.log(toNum(n!)) / Math.log(toNum(base!, 'base'))),
  max: defineFunction(1, Infinity, (args) => Math.max(...args.map((a) => toNum(a)))),
  min: defineFunction(1, Infinity, (args) => Math.min(...args.map((a) => toNum(a)))),
  parseint: defineFunction(2, 2, ([s, base]) => parseInt(toStr(s!, 'number'), toInt(base!, 'base'))),
  pow: defineFunction(2, 2, ([a, b]) => Math.pow(toNum(a!), toNum(b!))),
  signum: defineFunction(1, 1, ([n]) => Math.sign(toNum(n!))),
};
