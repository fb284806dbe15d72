/**
 * Decoding of `constraint`, `affinity` and `spread` blocks, including Nomad's shorthand
 * operators: `distinct_hosts = true`, `regexp = "…"`, `version = "…"`, `semver = "…"`,
 * `set_contains = "…"`, `distinct_property = "${meta.rack}"`, `operator = "is_set"`, ….
 */
import type { Affinity, Constraint, Spread, SpreadTarget } from '../structs/job.js';
import type { HclBody } from './hcl-body.js';

/** Shorthand keys whose value becomes RTarget with the key as Operand. */
const VALUE_SHORTHANDS = ['regexp', 'version', 'semver', 'set_contains', 'set_contains_any', 'set_contains_all'] as const;

/** Decodes one `constraint` block into Constraint{LTarget, RTarget, Operand}, as Nomad does. */
export function constraintFromHcl(b: HclBody): Constraint {
  const c: Constraint = {
    LTarget: b.string('attribute') ?? '',
    RTarget: b.string('value') ?? '',
    Operand: b.string('operator') ?? '=',
  };
  for (const key of VALUE_SHORTHANDS) {
    const v = b.string(key);
    if (v !== undefined) {
      c.Operand = key;
      c.RTarget = v;
    }
  }
  // As Nomad's decodeConstraint (jobspec2 TestParse_Constraint_Alternatives): the shorthand
  // equals `operator = "distinct_hosts"` with its value, so `distinct_hosts = false` stays a
  // (disabled) distinct_hosts constraint instead of an empty equality.
  const distinctHosts = b.bool('distinct_hosts');
  if (distinctHosts !== undefined) {
    c.Operand = 'distinct_hosts';
    c.RTarget = String(distinctHosts);
  }
  const distinctProperty = b.string('distinct_property');
  if (distinctProperty !== undefined) {
    c.Operand = 'distinct_property';
    c.LTarget = distinctProperty;
  }
  b.finish();
  return c;
}

/** Decodes one `affinity` block; weight defaults to 50 as in Nomad. */
export function affinityFromHcl(b: HclBody): Affinity {
  const a: Affinity = {
    LTarget: b.string('attribute') ?? '',
    RTarget: b.string('value') ?? '',
    Operand: b.string('operator') ?? '=',
    Weight: b.number('weight') ?? 50,
  };
  for (const key of VALUE_SHORTHANDS) {
    const v = b.string(key);
    if (v !== undefined) {
      a.Operand = key;
      a.RTarget = v;
    }
  }
  b.finish();
  return a;
}

/** Decodes one `spread` block with its `target "value" { percent = n }` blocks. */
export function spreadFromHcl(b: HclBody): Spread {
  const targets: SpreadTarget[] = b.labelled('target').map(({ label, body }) => {
    const t: SpreadTarget = { Value: label, Percent: body.number('percent') ?? 0 };
    body.finish();
    return t;
  });
  const s: Spread = {
    Attribute: b.string('attribute') ?? '',
    Weight: b.number('weight') ?? 50,
    SpreadTarget: targets.length > 0 ? targets : null,
  };
  b.finish();
  return s;
}

/** Reads every constraint, affinity and spread block of a body (the keys a body allows). */
export function placementFromHcl(b: HclBody, withSpread: boolean): {
  Constraints?: Constraint[];
  Affinities?: Affinity[];
  Spreads?: Spread[];
} {
  const out: { Constraints?: Constraint[]; Affinities?: Affinity[]; Spreads?: Spread[] } = {};
  const cs = b.blocks('constraint').map(constraintFromHcl);
  if (cs.length > 0) out.Constraints = cs;
  const as = b.blocks('affinity').map(affinityFromHcl);
  if (as.length > 0) out.Affinities = as;
  if (withSpread) {
    const ss = b.blocks('spread').map(spreadFromHcl);
    if (ss.length > 0) out.Spreads = ss;
  }
  return out;
}
