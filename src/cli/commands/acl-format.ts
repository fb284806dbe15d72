/** How the `acl` commands print tokens, policies and roles (Nomad's CLI layout). */
import type { AclPolicy, AclPolicyListStub, AclRole, AclToken, AclTokenListStub } from '../../structs/acl.js';
import { formatColumns, formatKV } from '../format/columns.js';
import { formatIsoTime } from '../format/time-format.js';

/** A token as `acl token info|self|create` and `acl bootstrap` print it. */
export function formatToken(t: AclToken): string {
  const mgmt = t.Type === 'management';
  return formatKV([
    ['Accessor ID', t.AccessorID],
    ['Secret ID', t.SecretID],
    ['Name', t.Name || '<none>'],
    ['Type', t.Type],
    ['Global', String(t.Global)],
    ['Create Time', formatIsoTime(t.CreateTime)],
    ['Expiry Time', t.ExpirationTime ? formatIsoTime(t.ExpirationTime) : '<none>'],
    ['Create Index', String(t.CreateIndex)],
    ['Modify Index', String(t.ModifyIndex)],
    ['Policies', mgmt ? 'n/a' : (t.Policies ?? []).join(', ') || '<none>'],
    ['Roles', mgmt ? 'n/a' : (t.Roles ?? []).map((r) => r.Name || r.ID).join(', ') || '<none>'],
  ]);
}

export function formatTokenList(list: AclTokenListStub[]): string {
  if (list.length === 0) return 'No tokens found';
  return formatColumns([
    ['Name', 'Type', 'Global', 'Accessor ID', 'Expired'],
    ...list.map((t) => [t.Name || '<none>', t.Type, String(t.Global), t.AccessorID, String(t.ExpirationTime !== null && Date.parse(t.ExpirationTime) <= Date.now())]),
  ]);
}

export function formatPolicy(p: AclPolicy): string {
  return `${formatKV([
    ['Name', p.Name],
    ['Description', p.Description || '<none>'],
    ['CreateIndex', String(p.CreateIndex)],
    ['ModifyIndex', String(p.ModifyIndex)],
  ])}\n\nRules\n\n${p.Rules}`;
}

export function formatPolicyList(list: AclPolicyListStub[]): string {
  if (list.length === 0) return 'No policies found';
  return formatColumns([['Name', 'Description'], ...list.map((p) => [p.Name, p.Description || '<none>'])]);
}

export function formatRole(r: AclRole): string {
  return formatKV([
    ['ID', r.ID],
    ['Name', r.Name],
    ['Description', r.Description || '<none>'],
    ['Policies', r.Policies.map((p) => p.Name).join(', ')],
    ['Create Index', String(r.CreateIndex)],
    ['Modify Index', String(r.ModifyIndex)],
  ]);
}

export function formatRoleList(list: AclRole[]): string {
  if (list.length === 0) return 'No ACL roles found';
  return formatColumns([['ID', 'Name', 'Description', 'Policies'], ...list.map((r) => [r.ID, r.Name, r.Description || '<none>', r.Policies.map((p) => p.Name).join(',')])]);
}
