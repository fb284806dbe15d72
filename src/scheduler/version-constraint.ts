/**
 * Version comparison for the `version` and `semver` constraint operands. `version` follows
 * go-version (as Nomad does): a pre-release only satisfies terms that name a pre-release of the
 * same base version. `semver` orders pre-releases by Semantic Versioning 2.0 precedence.
 */

interface ParsedVersion {
  segments: number[];
  /** How many segments the text named ("1.2" → 2); used by the pessimistic operator. */
  given: number;
  pre: string;
}

const VERSION_RE = /^v?(\d+(?:\.\d+)*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Parses "1.2.3-beta+meta"; undefined when malformed. */
export function parseVersion(text: string): ParsedVersion | undefined {
  const m = VERSION_RE.exec(text.trim());
  if (!m) return undefined;
  const segments = m[1]!.split('.').map(Number);
  const given = segments.length;
  while (segments.length < 3) segments.push(0);
  return { segments, given, pre: m[2] ?? '' };
}

function comparePre(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  const pa = a.split('.');
  const pb = b.split('.');
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    if (xn && yn) {
      const d = Number(x) - Number(y);
      if (d !== 0) return d < 0 ? -1 : 1;
    } else if (xn !== yn) {
      return xn ? -1 : 1;
    } else if (x !== y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

/** Orders two parsed versions: negative, zero or positive. */
export function compareVersions(a: ParsedVersion, b: ParsedVersion): number {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) {
    const d = (a.segments[i] ?? 0) - (b.segments[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return comparePre(a.pre, b.pre);
}

function sameBase(a: ParsedVersion, b: ParsedVersion): boolean {
  const n = Math.max(a.segments.length, b.segments.length);
  for (let i = 0; i < n; i++) if ((a.segments[i] ?? 0) !== (b.segments[i] ?? 0)) return false;
  return true;
}

const TERM_RE = /^\s*(>=|<=|!=|~>|=|>|<)?\s*(\S+)\s*$/;

/**
 * True when `version` satisfies every comma-separated term of `constraint` (">= 1.2, < 2").
 * A malformed version or constraint never matches.
 */
export function versionSatisfies(version: string, constraint: string, mode: 'version' | 'semver'): boolean {
  const v = parseVersion(version);
  if (!v) return false;
  const terms = constraint.split(',');
  if (terms.length === 0) return false;
  for (const term of terms) {
    const m = TERM_RE.exec(term);
    if (!m) return false;
    const op = m[1] ?? '=';
    const c = parseVersion(m[2]!);
    if (!c) return false;
    if (mode === 'version') {
      if (v.pre !== '' && c.pre === '') return false;
      if (v.pre !== '' && c.pre !== '' && !sameBase(v, c)) return false;
    }
    const cmp = compareVersions(v, c);
    let ok: boolean;
    switch (op) {
      case '=': ok = cmp === 0; break;
      case '!=': ok = cmp !== 0; break;
      case '>': ok = cmp > 0; break;
      case '<': ok = cmp < 0; break;
      case '>=': ok = cmp >= 0; break;
      case '<=': ok = cmp <= 0; break;
      case '~>': {
        if (cmp < 0) { ok = false; break; }
        // "~> 1.2.3" keeps 1.2.x; "~> 1.2" keeps 1.x: all but the last named segment must match.
        const fixed = Math.max(1, c.given - 1);
        ok = true;
        for (let i = 0; i < fixed; i++) if (v.segments[i] !== c.segments[i]) ok = false;
        break;
      }
      default: ok = false;
    }
    if (!ok) return false;
  }
  return true;
}
