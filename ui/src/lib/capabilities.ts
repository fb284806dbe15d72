/**
 * What a token may do, decided in the browser from its policies' RulesJSON with the server's
 * own evaluator (src/acl/acl.ts): the same exact-name-then-most-specific-glob namespace match,
 * deny winning, coarse rules merged. Only for showing or hiding actions — the agent checks
 * every request itself.
 */
import { Acl } from '../../../src/acl/acl.js';
import type { Disposition } from '../../../src/acl/capabilities.js';
import type { PolicyRules } from '../../../src/acl/policy-parser.js';
import type { PolicyRulesJson } from '../../../src/acl/policy-rules-json.js';

const disposition = (p: { Policy: string } | null | undefined): Disposition | undefined => (p?.Policy ? (p.Policy as Disposition) : undefined);

/** Nomad's RulesJSON back into the evaluator's rules. */
export function rulesFromJson(json: PolicyRulesJson): PolicyRules {
  return {
    namespaces: (json.Namespaces ?? []).map((n) => ({
      name: n.Name,
      capabilities: n.Capabilities ?? [],
      variables: (n.Variables?.Paths ?? []).map((v) => ({ path: v.PathSpec, capabilities: v.Capabilities ?? [] })),
    })),
    hostVolumes: (json.HostVolumes ?? []).map((h) => ({ name: h.Name, capabilities: h.Capabilities ?? [] })),
    ...optional('agent', disposition(json.Agent)),
    ...optional('node', disposition(json.Node)),
    ...optional('operator', disposition(json.Operator)),
    ...optional('quota', disposition(json.Quota)),
    ...optional('plugin', disposition(json.Plugin)),
  };
}

function optional<K extends string>(key: K, d: Disposition | undefined): Partial<Record<K, Disposition>> {
  return d === undefined ? {} : ({ [key]: d } as Record<K, Disposition>);
}

/** The compiled permissions of a client token holding these policies (null: unreadable, grants nothing). */
export function compileAcl(policies: ReadonlyArray<PolicyRulesJson | null>): Acl {
  return Acl.compile(policies.filter((p): p is PolicyRulesJson => p !== null).map(rulesFromJson));
}
