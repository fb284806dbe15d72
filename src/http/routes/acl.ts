/**
 * The ACL routes, registered when the agent's `acl { enabled = true }`: bootstrap, policies,
 * tokens and roles, as Nomad's /v1/acl/* answers them. Writes need a management token; a
 * client token may read itself (`token/self`), and the policies and roles it holds. A token's
 * SecretID is answered on creation, to a management token, and to the token itself — never in a
 * list.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Table } from '../../server/state/state-reader.js';
import type { ServerApi } from '../../server/server-api.js';
import type { AclEndpoint } from '../../server/endpoints/acl-endpoint.js';
import { aclPolicyStub, aclTokenStub, type AclRole, type AclToken } from '../../structs/acl.js';
import { HttpError } from '../http-errors.js';
import { optionalObjectBody } from '../request-body.js';
import { answerRead, answerWrite, modifyIndex, requireServer, type RouteContext } from '../route-context.js';
import { permissionDenied, requestAcl, type RequestAcl } from '../acl/acl-gate.js';
import { acl } from '../acl/route-acl.js';
import { policyRulesJson } from '../../acl/policy-rules-json.js';

function endpoint(server: ServerApi): AclEndpoint {
  if (!server.acl) throw new HttpError('HTTP_ACL_DISABLED', {});
  return server.acl;
}

/** The caller's resolved token (the gate attached it; always present on these routes). */
function caller(req: FastifyRequest): RequestAcl {
  const r = requestAcl(req);
  if (!r) throw permissionDenied();
  return r;
}

/** The policy names the caller holds, directly or through roles. */
function heldPolicies(server: ServerApi, r: RequestAcl): Set<string> {
  return new Set(endpoint(server).policiesOf(r.token));
}

/** Nomad's role answer: its policies as links. */
const roleView = (r: AclRole): AclRole => r;

/** A token as answered: its roles' names filled in from the role table. */
function tokenView(server: ServerApi, t: AclToken): AclToken {
  if (!t.Roles) return t;
  return { ...t, Roles: t.Roles.map((l) => ({ ID: l.ID, Name: endpoint(server).tables.role(l.ID)?.Name ?? l.Name })) };
}

/** Registers the ACL routes. */
export function registerAclRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const both = (url: string, opts: ReturnType<typeof acl.management>, handler: (req: FastifyRequest<{ Params: Record<string, string> }>, reply: FastifyReply) => Promise<unknown>) => {
    app.put(url, opts, handler);
    app.post(url, opts, handler);
  };

  // ---- bootstrap ----
  both('/v1/acl/bootstrap', acl.public(), async (req, reply) => {
    const body = optionalObjectBody(req.body);
    const secret = body?.['BootstrapSecret'];
    const token = await endpoint(requireServer(ctx)).bootstrap(typeof secret === 'string' ? secret : undefined);
    return answerWrite(req, reply, token.ModifyIndex, token);
  });

  // ---- policies ----
  app.get('/v1/acl/policies', acl.filtered(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AclPolicies], (server) => {
      const r = caller(req);
      const all = endpoint(server).tables.allPolicies();
      const held = r.acl.isManagement ? null : heldPolicies(server, r);
      return all.filter((p) => held === null || held.has(p.Name)).map(aclPolicyStub);
    }),
  );
  app.get<{ Params: { name: string } }>('/v1/acl/policy/:name', acl.filtered(), async (req, reply) => {
    // Nomad answers the parsed rules as RulesJSON (its web UI reads them). Parsing is async and
    // the read below is not, so the rules are parsed first; a blocking read that wakes on a
    // newer version of the policy answers RulesJSON null rather than stale rules.
    const parsed = await endpoint(requireServer(ctx)).parsedRules(req.params.name);
    return answerRead(ctx, req, reply, [Table.AclPolicies], (server) => {
      const r = caller(req);
      if (!r.acl.isManagement && !heldPolicies(server, r).has(req.params.name)) throw permissionDenied();
      const p = endpoint(server).tables.policy(req.params.name);
      if (!p) throw new HttpError('ACL_OBJECT_NOT_FOUND', { what: 'policy' });
      const rules = parsed?.modifyIndex === p.ModifyIndex ? parsed.rules : null;
      return { ...p, RulesJSON: rules ? policyRulesJson(rules) : null };
    }, modifyIndex);
  });
  both('/v1/acl/policy/:name', acl.management(), async (req, reply) => {
    const body = optionalObjectBody(req.body) ?? {};
    const index = await endpoint(requireServer(ctx)).upsertPolicy(req.params['name'] ?? '', body);
    return answerWrite(req, reply, index, null);
  });
  app.delete<{ Params: { name: string } }>('/v1/acl/policy/:name', acl.management(), async (req, reply) => {
    const index = await endpoint(requireServer(ctx)).deletePolicy(req.params.name);
    return answerWrite(req, reply, index, null);
  });

  // ---- tokens ----
  app.get('/v1/acl/tokens', acl.management(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AclTokens, Table.AclRoles], (server) => endpoint(server).tables.allTokens().map((t) => aclTokenStub(tokenView(server, t)))),
  );
  app.get('/v1/acl/token/self', acl.token(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AclTokens], (server) => tokenView(server, caller(req).token)),
  );
  both('/v1/acl/token', acl.management(), async (req, reply) => {
    const body = optionalObjectBody(req.body) ?? {};
    if (typeof body['AccessorID'] === 'string' && body['AccessorID'] !== '') throw new HttpError('ACL_REQUEST_INVALID', { reason: 'AccessorID must be empty when creating a token (update it at /v1/acl/token/<accessor>)' });
    const server = requireServer(ctx);
    const token = await endpoint(server).upsertToken(body);
    return answerWrite(req, reply, token.ModifyIndex, tokenView(server, token));
  });
  app.get<{ Params: { accessor: string } }>('/v1/acl/token/:accessor', acl.filtered(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AclTokens], (server) => {
      const r = caller(req);
      if (!r.acl.isManagement && r.token.AccessorID !== req.params.accessor) throw permissionDenied();
      const t = endpoint(server).tables.tokenByAccessor(req.params.accessor);
      if (!t) throw new HttpError('ACL_OBJECT_NOT_FOUND', { what: 'token' });
      return tokenView(server, t);
    }, modifyIndex),
  );
  both('/v1/acl/token/:accessor', acl.management(), async (req, reply) => {
    const body = optionalObjectBody(req.body) ?? {};
    const server = requireServer(ctx);
    const token = await endpoint(server).upsertToken(body, req.params['accessor']);
    return answerWrite(req, reply, token.ModifyIndex, tokenView(server, token));
  });
  app.delete<{ Params: { accessor: string } }>('/v1/acl/token/:accessor', acl.management(), async (req, reply) => {
    const index = await endpoint(requireServer(ctx)).deleteToken(req.params.accessor);
    return answerWrite(req, reply, index, null);
  });

  // ---- roles ----
  const heldRoles = (r: RequestAcl): Set<string> | null => (r.acl.isManagement ? null : new Set((r.token.Roles ?? []).map((l) => l.ID)));
  app.get('/v1/acl/roles', acl.filtered(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AclRoles], (server) => {
      const held = heldRoles(caller(req));
      return endpoint(server).tables.allRoles().filter((role) => held === null || held.has(role.ID)).map(roleView);
    }),
  );
  both('/v1/acl/role', acl.management(), async (req, reply) => {
    const body = optionalObjectBody(req.body) ?? {};
    if (typeof body['ID'] === 'string' && body['ID'] !== '') throw new HttpError('ACL_REQUEST_INVALID', { reason: 'ID must be empty when creating a role (update it at /v1/acl/role/<id>)' });
    const role = await endpoint(requireServer(ctx)).upsertRole(body);
    return answerWrite(req, reply, role.ModifyIndex, role);
  });
  app.get<{ Params: { name: string } }>('/v1/acl/role/name/:name', acl.filtered(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AclRoles], (server) => {
      const role = endpoint(server).tables.roleByName(req.params.name);
      const held = heldRoles(caller(req));
      if (held !== null && (!role || !held.has(role.ID))) throw permissionDenied();
      if (!role) throw new HttpError('ACL_OBJECT_NOT_FOUND', { what: 'role' });
      return role;
    }, modifyIndex),
  );
  app.get<{ Params: { id: string } }>('/v1/acl/role/:id', acl.filtered(), (req, reply) =>
    answerRead(ctx, req, reply, [Table.AclRoles], (server) => {
      const held = heldRoles(caller(req));
      if (held !== null && !held.has(req.params.id)) throw permissionDenied();
      const role = endpoint(server).tables.role(req.params.id);
      if (!role) throw new HttpError('ACL_OBJECT_NOT_FOUND', { what: 'role' });
      return role;
    }, modifyIndex),
  );
  both('/v1/acl/role/:id', acl.management(), async (req, reply) => {
    const body = optionalObjectBody(req.body) ?? {};
    const role = await endpoint(requireServer(ctx)).upsertRole(body, req.params['id']);
    return answerWrite(req, reply, role.ModifyIndex, role);
  });
  app.delete<{ Params: { id: string } }>('/v1/acl/role/:id', acl.management(), async (req, reply) => {
    const index = await endpoint(requireServer(ctx)).deleteRole(req.params.id);
    return answerWrite(req, reply, index, null);
  });
}
