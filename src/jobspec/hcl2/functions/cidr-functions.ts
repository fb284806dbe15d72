/**
 * go-cty-funcs' CIDR functions over IPv4 and IPv6 prefixes, with addresses as BigInt:
 * cidrhost, cidrnetmask (IPv4 only), cidrsubnet, cidrsubnets.
 */
import type { HclFunction } from '../expression-evaluator.js';
import { evalError } from '../hcl-eval-error.js';
import { toInt, toStr } from '../hcl-value.js';
import { defineFunction } from './define-function.js';

interface Prefix {
  addr: bigint;
  bits: number;
  /** 32 or 128. */
  width: number;
}

function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.reduce((acc, p) => (acc << 8n) | BigInt(p), 0n);
}

function parseIPv6(s: string): bigint | undefined {
  let text = s;
  let tail: bigint[] = [];
  const v4 = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (v4) {
    const n = parseIPv4(v4[1]!);
    if (n === undefined) return undefined;
    tail = [n >> 16n, n & 0xffffn];
    text = text.slice(0, -v4[1]!.length);
    if (text.endsWith(':') && !text.endsWith('::')) text = text.slice(0, -1);
  }
  const halves = text.split('::');
  if (halves.length > 2) return undefined;
  const group = (h: string): bigint[] | undefined => {
    if (h === '') return [];
    const gs = h.split(':');
    if (!gs.every((g) => /^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
    return gs.map((g) => BigInt(`0x${g}`));
  };
  const head = group(halves[0]!);
  const rest = halves.length === 2 ? group(halves[1]!) : [];
  if (!head || !rest) return undefined;
  const given = head.length + rest.length + tail.length;
  if (halves.length === 1 ? given !== 8 : given > 7) return undefined;
  const groups = [...head, ...Array<bigint>(8 - given).fill(0n), ...rest, ...tail];
  return groups.reduce((acc, g) => (acc << 16n) | g, 0n);
}

function parsePrefix(s: string): Prefix {
  const m = /^([^/]+)\/(\d+)$/.exec(s);
  if (!m) throw evalError(`invalid CIDR address ${JSON.stringify(s)}`);
  const v4 = parseIPv4(m[1]!);
  const addr = v4 ?? parseIPv6(m[1]!);
  const width = v4 !== undefined ? 32 : 128;
  const bits = Number(m[2]);
  if (addr === undefined || bits > width) throw evalError(`invalid CIDR address ${JSON.stringify(s)}`);
  const mask = ((1n << BigInt(width)) - 1n) ^ ((1n << BigInt(width - bits)) - 1n);
  return { addr: addr & mask, bits, width };
}

function formatAddr(addr: bigint, width: number): string {
  if (width === 32) return [24n, 16n, 8n, 0n].map((s) => String((addr >> s) & 0xffn)).join('.');
  const groups = Array.from({ length: 8 }, (_v, i) => Number((addr >> BigInt(112 - i * 16)) & 0xffffn));
  // The longest run of two or more zero groups becomes "::", as Go prints it.
  let best = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(':');
  return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
}

function host(prefix: string, num: number): string {
  const p = parsePrefix(prefix);
  const size = 1n << BigInt(p.width - p.bits);
  let n = BigInt(num);
  if (n < 0n) n += size;
  if (n < 0n || n >= size) throw evalError(`prefix ${prefix} has no host number ${num}`);
  return formatAddr(p.addr + n, p.width);
}

function subnet(p: Prefix, newbits: number, num: bigint, text: string): Prefix {
  const bits = p.bits + newbits;
  if (newbits < 0 || bits > p.width) throw evalError(`insufficient address space to extend prefix ${text} by ${newbits} bits`);
  if (num < 0n || num >= 1n << BigInt(newbits)) throw evalError(`prefix extension of ${newbits} bits does not accommodate a subnet numbered ${num}`);
  return { addr: p.addr | (num << BigInt(p.width - bits)), bits, width: p.width };
}

const show = (p: Prefix): string => `${formatAddr(p.addr, p.width)}/${p.bits}`;

function subnets(prefix: string, newbitsList: number[]): string[] {
  const base = parsePrefix(prefix);
  const out: string[] = [];
  let next = base.addr;
  for (const nb of newbitsList) {
    const bits = base.bits + nb;
    if (nb < 1 || bits > base.width) throw evalError(`would extend prefix ${prefix} to ${bits} bits, which is too long for an IPv${base.width === 32 ? 4 : 6} address`);
    const size = 1n << BigInt(base.width - bits);
    const start = ((next + size - 1n) / size) * size;
    if (start + size > base.addr + (1n << BigInt(base.width - base.bits))) throw evalError(`not enough remaining address space for a subnet with a prefix of ${bits} bits`);
    out.push(show({ addr: start, bits, width: base.width }));
    next = start + size;
  }
  return out;
}

/** CIDR functions by name. */
export const CIDR_FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  cidrhost: defineFunction(2, 2, ([p, n]) => host(toStr(p!, 'prefix'), toInt(n!, 'host number'))),
  cidrnetmask: defineFunction(1, 1, ([p]) => {
    const prefix = parsePrefix(toStr(p!, 'prefix'));
    if (prefix.width !== 32) throw evalError('cidrnetmask() only supports IPv4 prefixes');
    return formatAddr(((1n << 32n) - 1n) ^ ((1n << BigInt(32 - prefix.bits)) - 1n), 32);
  }),
  cidrsubnet: defineFunction(3, 3, ([p, nb, n]) => {
    const text = toStr(p!, 'prefix');
    return show(subnet(parsePrefix(text), toInt(nb!, 'newbits'), BigInt(toInt(n!, 'netnum')), text));
  }),
  cidrsubnets: defineFunction(1, Infinity, ([p, ...nbs]) => subnets(toStr(p!, 'prefix'), nbs.map((n) => toInt(n, 'newbits')))),
};
