/**
 * A policy's parsed rules in Nomad's `RulesJSON` shape (its acl.Policy struct as JSON), which
 * Nomad answers beside `Rules` on GET /v1/acl/policy/:name. Nomad's web UI (and Caravan's)
 * reads it to decide which actions a token may take without parsing HCL in the browser. As in
 * Nomad, a namespace's `Capabilities` already hold what its `policy` disposition stands for.
 * Pure.
 */
import type { PolicyRules } from './policy-parser.js';

/** One `namespace "pattern"` rule as Nomad's NamespacePolicy. */
export interface NamespacePolicyJson {
  Name: string;
  Policy: string;
  Capabilities: string[];
  Variables: { Paths: { PathSpec: string; Capabilities: string[] }[] } | null;
}

/** Nomad's acl.Policy as JSON. */
export interface PolicyRulesJson {
  Namespaces: NamespacePolicyJson[] | null;
  HostVolumes: { Name: string; Policy: string; Capabilities: string[] }[] | null;
  Agent: { Policy: string } | null;
  Node: { Policy: string } | null;
  Operator: { Policy: string; Capabilities?: string[] } | null;
  Quota: { Policy: string } | null;
  Plugin: { Policy: string } | null;
}

const coarse = (d: string | undefined): { Policy: string } | null => (d === undefined ? null : { Policy: d });

/** `rules` as Nomad's RulesJSON. The parser keeps no disposition per namespace, so `Policy` is "". */
export function policyRulesJson(rules: PolicyRules): PolicyRulesJson {
  return {
    Namespaces: rules.namespaces.length
      ? rules.namespaces.map((n) => ({
          Name: n.name,
          Policy: '',
          Capabilities: [...n.capabilities],
          Variables: n.variables.length ? { Paths: n.variables.map((v) => ({ PathSpec: v.path, Capabilities: [...v.capabilities] })) } : null,
        }))
      : null,
    HostVolumes: rules.hostVolumes.length ? rules.hostVolumes.map((h) => ({ Name: h.name, Policy: '', Capabilities: [...h.capabilities] })) : null,
    Agent: coarse(rules.agent),
    Node: coarse(rules.node),
    Operator: rules.operator === undefined && !rules.operatorCapabilities?.length ? null : { Policy: rules.operator ?? '', ...(rules.operatorCapabilities?.length ? { Capabilities: [...rules.operatorCapabilities] } : {}) },
    Quota: coarse(rules.quota),
    Plugin: coarse(rules.plugin),
  };
}
