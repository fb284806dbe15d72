/**
 * `PUT|POST /v1/job/<id>/versions/<name>/tag` (Nomad's TagVersionRequest: `Version`, or
 * `Latest` for the current version, and `Description`) and `DELETE` of the same path (removes
 * the tag from whichever version carries it). Tags show in GET /v1/job/:id/versions.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, methodNotAllowed } from '../http-errors.js';
import { optionalBool, optionalObjectBody, optionalString, optionalUint } from '../request-body.js';
import { answerWrite, queryOptions, requireServer, type RouteContext } from '../route-context.js';

/** Answers the version tag route of job `jobId`. */
export async function versionTagRoute(ctx: RouteContext, req: FastifyRequest, reply: FastifyReply, jobId: string, name: string): Promise<FastifyReply> {
  const server = requireServer(ctx);
  if (!server.versionTags) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'job version tags' });
  const namespace = queryOptions(req).namespace;
  if (req.method === 'DELETE') {
    const res = await server.versionTags.untagVersion(namespace, jobId, name);
    return answerWrite(req, reply, res.index, null);
  }
  if (req.method !== 'PUT' && req.method !== 'POST') throw methodNotAllowed(req.method, req.url);
  const body = optionalObjectBody(req.body);
  const version = optionalBool(body, 'Latest') ? undefined : optionalUint(body, 'Version');
  const res = await server.versionTags.tagVersion(namespace, jobId, name, version, optionalString(body, 'Description'));
  return answerWrite(req, reply, res.index, null);
}
