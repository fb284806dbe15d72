/**
 * Nomad's ACL policy language, in HCL or in its JSON form, parsed into rules: `namespace
 * "pattern" { policy, capabilities, variables { path "…" { capabilities } } }`, `host_volume
 * "pattern" { … }`, and the coarse `agent`, `node`, `operator`, `quota` and `plugin` rules.
 * Dispositions expand into capabilities here (Nomad's acl.Parse). Anything unknown — a block,
 * an attribute, a disposition, a capability — is refused with its name and, in HCL, its line.
 * Pure: no I/O but the HCL decoder.
 */
import { parse as parseHcl } from '@cdktf/hcl2json';
import {
  HOST_VOLUME_CAPABILITIES,
  NAMESPACE_CAPABILITIES,
  OPERATOR_CAPABILITIES,
  RULE_DISPOSITIONS,
  VARIABLE_CAPABILITIES,
  expandHostVolumePolicy,
  expandNamespacePolicy,
  impliedNamespaceCapabilities,
  type Disposition,
} from './capabilities.js';

/** One `path` of a namespace's `variables` block. */
export interface VariablePathRule {
  path: string;
  capabilities: string[];
}

/** A `namespace "pattern"` rule with its disposition expanded into capabilities. */
export interface NamespaceRule {
  name: string;
  capabilities: string[];
  variables: VariablePathRule[];
}

/** A `host_volume "pattern"` rule. */
export interface HostVolumeRule {
  name: string;
  capabilities: string[];
}

/** A parsed policy: the rules it grants. */
export interface PolicyRules {
  namespaces: NamespaceRule[];
  hostVolumes: HostVolumeRule[];
  agent?: Disposition;
  node?: Disposition;
  operator?: Disposition;
  /** The operator rule's explicit capabilities (snapshot-save, license-read). */
  operatorCapabilities?: string[];
  quota?: Disposition;
  plugin?: Disposition;
}

/** A policy that is not valid; the message names the rule and, when known, the line. */
export class PolicyParseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyParseError';
  }
}

type Raw = Record<string, unknown>;

const NAME_PATTERN = /^[a-zA-Z0-9\-*]{1,128}$/;
const TOP_LEVEL = new Set(['namespace', 'host_volume', 'agent', 'node', 'operator', 'quota', 'plugin', 'node_pool']);

/** Parses a policy's rules (HCL, or JSON when it starts with "{"); throws PolicyParseError. */
export async function parsePolicy(rules: string): Promise<PolicyRules> {
  const text = rules ?? '';
  if (text.trim() === '') throw new PolicyParseError('Invalid policy: no rules');
  let tree: unknown;
  if (text.trimStart().startsWith('{')) {
    try {
      tree = JSON.parse(text);
    } catch (err) {
      throw new PolicyParseError(`Failed to parse ACL policy: invalid JSON: ${(err as Error).message}`);
    }
  } else {
    try {
      tree = await parseHcl('policy.hcl', text);
    } catch (err) {
      throw new PolicyParseError(`Failed to parse ACL policy: ${hclSyntaxMessage(err)}`);
    }
  }
  return rulesFromTree(tree, new LineFinder(text));
}

/** hcl2json's errors read `parse config: [policy.hcl:3,10-4,1: Summary; Detail]`. */
function hclSyntaxMessage(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const m = /:(\d+),\d+(?:-\d+(?:,\d+)?)?: ([^\]]*)\]?/.exec(text);
  return m ? `line ${m[1]}: ${m[2]!.trim()}` : text.replace(/^parse config: /, '');
}

/** Finds the line of a rule or a value in the source, for error messages (best effort). */
class LineFinder {
  constructor(private readonly source: string) {}

  /** " (line N)" for the first match of `re` at or after `from`, or "". */
  line(re: RegExp, from = 0): string {
    const at = this.offset(re, from);
    if (at < 0) return '';
    return ` (line ${this.source.slice(0, at).split('\n').length})`;
  }

  offset(re: RegExp, from = 0): number {
    const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
    g.lastIndex = from;
    const m = g.exec(this.source);
    return m ? m.index : -1;
  }
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A block's bodies: hcl2json gives arrays, HCL's JSON form objects or arrays. */
function bodies(v: unknown, what: string): Raw[] {
  const list = Array.isArray(v) ? v : [v];
  for (const b of list) if (!isObject(b)) throw new PolicyParseError(`${what}: must be a block`);
  return list as Raw[];
}

/** Labelled blocks: `{label: body | body[]}` (or a list of such maps in HCL's JSON form). */
function labelled(v: unknown, what: string): { label: string; body: Raw }[] {
  const maps = Array.isArray(v) ? v : [v];
  const out: { label: string; body: Raw }[] = [];
  for (const m of maps) {
    if (!isObject(m)) throw new PolicyParseError(`${what}: must be labelled blocks, e.g. ${what} "default" { … }`);
    for (const [label, body] of Object.entries(m)) for (const b of bodies(body, `${what} "${label}"`)) out.push({ label, body: b });
  }
  return out;
}

function rulesFromTree(tree: unknown, lines: LineFinder): PolicyRules {
  if (!isObject(tree)) throw new PolicyParseError('Invalid policy: want rule blocks such as namespace "default" { policy = "read" }');
  const out: PolicyRules = { namespaces: [], hostVolumes: [] };
  for (const key of Object.keys(tree)) {
    if (!TOP_LEVEL.has(key)) throw new PolicyParseError(`Invalid policy: unknown rule "${key}"${lines.line(new RegExp(`(^|\\n)\\s*"?${esc(key)}\\b`))}`);
  }
  if (tree['node_pool'] !== undefined) {
    // Node pools are not part of Caravan; accepted so policies written for Nomad still apply.
    for (const { label } of labelled(tree['node_pool'], 'node_pool')) checkName('node_pool', label, lines);
  }
  for (const { label, body } of labelled(tree['namespace'] ?? [], 'namespace')) out.namespaces.push(namespaceRule(label, body, lines));
  for (const { label, body } of labelled(tree['host_volume'] ?? [], 'host_volume')) out.hostVolumes.push(hostVolumeRule(label, body, lines));
  for (const rule of ['agent', 'node', 'quota', 'plugin'] as const) {
    if (tree[rule] === undefined) continue;
    for (const body of bodies(tree[rule], rule)) {
      checkKeys(rule, body, ['policy'], lines, rule);
      out[rule] = disposition(rule, body, RULE_DISPOSITIONS[rule], lines, rule, true);
    }
  }
  if (tree['operator'] !== undefined) {
    for (const body of bodies(tree['operator'], 'operator')) {
      checkKeys('operator', body, ['policy', 'capabilities'], lines, 'operator');
      out.operator = disposition('operator', body, RULE_DISPOSITIONS.operator, lines, 'operator', body['capabilities'] === undefined);
      const caps = capabilities('operator', body, OPERATOR_CAPABILITIES, lines, 'operator');
      out.operatorCapabilities = [...(out.operatorCapabilities ?? []), ...caps];
    }
  }
  if (out.namespaces.length === 0 && out.hostVolumes.length === 0 && !out.agent && !out.node && !out.operator && !out.operatorCapabilities?.length && !out.quota && !out.plugin && tree['node_pool'] === undefined) {
    throw new PolicyParseError('Invalid policy: no rules');
  }
  return out;
}

function checkName(rule: string, label: string, lines: LineFinder): void {
  if (!NAME_PATTERN.test(label)) {
    throw new PolicyParseError(`Invalid ${rule} name "${label}"${lines.line(new RegExp(`${rule}\\s+"${esc(label)}"`))}: letters, digits, "-" and "*" only`);
  }
}

function checkKeys(what: string, body: Raw, allowed: string[], lines: LineFinder, header: string): void {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) {
      const from = lines.offset(new RegExp(header));
      throw new PolicyParseError(`${what}: unknown attribute or block "${k}"${lines.line(new RegExp(`\\b${esc(k)}\\b`), Math.max(0, from))} (want ${allowed.join(', ')})`);
    }
  }
}

function disposition(what: string, body: Raw, allowed: readonly Disposition[], lines: LineFinder, header: string, required: boolean): Disposition | undefined {
  const p = body['policy'];
  if (p === undefined || p === '') {
    if (required) throw new PolicyParseError(`${what}: policy is required (one of ${allowed.join(', ')})${lines.line(new RegExp(header))}`);
    return undefined;
  }
  if (typeof p !== 'string' || !(allowed as readonly string[]).includes(p)) {
    const from = Math.max(0, lines.offset(new RegExp(header)));
    throw new PolicyParseError(`${what}: invalid policy ${JSON.stringify(p)}${lines.line(/\bpolicy\s*[=:]/, from)} (want one of ${allowed.join(', ')})`);
  }
  return p as Disposition;
}

function capabilities(what: string, body: Raw, known: readonly string[], lines: LineFinder, header: string): string[] {
  const caps = body['capabilities'];
  if (caps === undefined) return [];
  if (!Array.isArray(caps) || !caps.every((c) => typeof c === 'string')) throw new PolicyParseError(`${what}: capabilities must be a list of strings${lines.line(new RegExp(header))}`);
  const from = Math.max(0, lines.offset(new RegExp(header)));
  for (const c of caps as string[]) {
    if (!known.includes(c)) throw new PolicyParseError(`${what}: unknown capability "${c}"${lines.line(new RegExp(`"${esc(c)}"`), from)}`);
  }
  return caps as string[];
}

function namespaceRule(name: string, body: Raw, lines: LineFinder): NamespaceRule {
  const what = `namespace "${name}"`;
  const header = `namespace\\s+"${esc(name)}"`;
  checkName('namespace', name, lines);
  checkKeys(what, body, ['policy', 'capabilities', 'variables'], lines, header);
  const policy = disposition(what, body, RULE_DISPOSITIONS.namespace, lines, header, false);
  const caps = capabilities(what, body, NAMESPACE_CAPABILITIES, lines, header);
  const all = [...caps, ...(policy ? expandNamespacePolicy(policy) : [])];
  const variables: VariablePathRule[] = [];
  if (body['variables'] !== undefined) {
    for (const v of bodies(body['variables'], `${what}: variables`)) {
      checkKeys(`${what}: variables`, v, ['path'], lines, header);
      for (const { label, body: pb } of labelled(v['path'] ?? [], `${what}: variables: path`)) {
        const pwhat = `${what}: variables: path "${label}"`;
        checkKeys(pwhat, pb, ['capabilities'], lines, header);
        const pcaps = capabilities(pwhat, pb, VARIABLE_CAPABILITIES, lines, `path\\s+"${esc(label)}"`);
        // As Nomad: deny overrides the rest; read implies list.
        const expanded = pcaps.includes('deny') ? ['deny'] : pcaps.includes('read') && !pcaps.includes('list') ? [...pcaps, 'list'] : pcaps;
        variables.push({ path: label, capabilities: expanded });
      }
    }
  }
  return { name, capabilities: dedupe([...all, ...impliedNamespaceCapabilities(all)]), variables };
}

function hostVolumeRule(name: string, body: Raw, lines: LineFinder): HostVolumeRule {
  const what = `host_volume "${name}"`;
  const header = `host_volume\\s+"${esc(name)}"`;
  checkName('host_volume', name, lines);
  checkKeys(what, body, ['policy', 'capabilities'], lines, header);
  const policy = disposition(what, body, RULE_DISPOSITIONS.host_volume, lines, header, false);
  const caps = capabilities(what, body, HOST_VOLUME_CAPABILITIES, lines, header);
  return { name, capabilities: dedupe([...caps, ...(policy ? expandHostVolumePolicy(policy) : [])]) };
}

function dedupe(xs: string[]): string[] {
  return [...new Set(xs)];
}
