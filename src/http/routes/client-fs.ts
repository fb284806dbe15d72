/**
 * The file-system routes of a client, confined to one allocation directory
 * (src/http/fs/alloc-path.ts): `GET /v1/client/fs/{ls,stat,cat,readat,stream}/:alloc?path=…`.
 * On a server without the allocation they are forwarded to the client holding it. A read in
 * progress (a followed stream) is cut when its token is deleted or expires.
 */
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { ConfinementCode, ConfinementError } from '../../fs/confined-fs.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { fileInfo, listDir } from '../fs/alloc-file-info.js';
import { allocFsError, allocFsFailure, AllocFsErrorCode, resolveAllocPath, type AllocPath } from '../fs/alloc-path.js';
import { followFile } from '../fs/file-follower.js';
import { openConfinedRead } from '../fs/read-chunk.js';
import { intParam, Origin, originParam } from '../fs/fs-query.js';
import { localAllocDir } from '../fs/local-alloc-dir.js';
import { streamChunks } from '../fs/stream-response.js';
import { forwardHttp } from '../forward/http-forward.js';
import { requestTarget } from '../forward/request-target.js';
import { queryFlag, queryParam, type RawQuery } from '../query-options.js';
import { sendJson, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

type AllocReq = FastifyRequest<{ Params: { alloc: string }; Querystring: RawQuery }>;
type LocalHandler = (req: AllocReq, reply: FastifyReply, allocDir: string) => Promise<unknown>;

/**
 * Wraps a handler: forward to the client holding the alloc, or run locally in its directory.
 * A local failure is answered naming only the path the caller gave (allocFsFailure), never
 * where the allocation lives on this machine.
 */
function allocRoute(ctx: RouteContext, handler: LocalHandler) {
  return async (req: AllocReq, reply: FastifyReply) => {
    ctx.gate.holdRequest(req, reply, () => reply.raw.destroy());
    const target = requestTarget(ctx, req.params.alloc, req.headers);
    if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);
    try {
      return await handler(req, reply, localAllocDir(target.client, req.params.alloc));
    } catch (err) {
      throw allocFsFailure(err, queryParam(req.query, 'path') ?? '/');
    }
  };
}

interface ResolvedFile extends AllocPath {
  /** The path as the caller gave it: what errors name. */
  given: string;
  size: number;
  /** The allocation directory's real path: what every later open is checked against. */
  realRoot: string;
}

async function resolveFile(allocDir: string, q: RawQuery): Promise<ResolvedFile> {
  const given = queryParam(q, 'path') ?? '/';
  const p = await resolveAllocPath(allocDir, given);
  const st = await stat(p.absolute);
  if (st.isDirectory()) throw allocFsError(AllocFsErrorCode.IsDirectory, `path ${JSON.stringify(given)} is a directory`);
  // A FIFO, socket or device is never read (every later open checks again: the task may swap it).
  if (!st.isFile()) throw new ConfinementError(ConfinementCode.NotRegular, `file ${JSON.stringify(given)} is not a regular file`);
  const realRoot = (await resolveAllocPath(allocDir, '/')).absolute;
  return { ...p, given, size: st.size, realRoot };
}

/** Sends a byte range of the file, opened through the confinement check (the task may have swapped it since it was resolved). */
async function sendFileRange(reply: FastifyReply, f: ResolvedFile, start: number, limit: number): Promise<FastifyReply> {
  if (limit === 0) return reply.code(200).header('Content-Type', 'text/plain; charset=utf-8').send('');
  const fh = await openConfinedRead(f.absolute, f.realRoot, f.given);
  if (fh === undefined) throw allocFsError(AllocFsErrorCode.NotFound, `file ${JSON.stringify(f.given)} not found in the allocation directory`);
  const end = limit > 0 ? start + limit - 1 : undefined;
  return reply
    .code(200)
    .header('Content-Type', 'text/plain; charset=utf-8')
    .send(fh.createReadStream({ start, ...(end !== undefined ? { end } : {}) }));
}

/** Registers ls, stat, cat, readat and stream. */
export function registerClientFsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const pretty = (req: AllocReq) => queryParam(req.query, 'pretty') !== undefined;

  app.get('/v1/client/fs/ls/:alloc', acl.ns('read-fs', 'alloc'), allocRoute(ctx, async (req, reply, allocDir) => {
    const p = await resolveAllocPath(allocDir, queryParam(req.query, 'path'));
    const st = await stat(p.absolute);
    if (!st.isDirectory()) {
      throw allocFsError(AllocFsErrorCode.NotDirectory, `path ${JSON.stringify(queryParam(req.query, 'path'))} is not a directory`);
    }
    return sendJson(reply, await listDir(p.absolute), pretty(req));
  }));

  app.get('/v1/client/fs/stat/:alloc', acl.ns('read-fs', 'alloc'), allocRoute(ctx, async (req, reply, allocDir) => {
    const p = await resolveAllocPath(allocDir, queryParam(req.query, 'path'));
    return sendJson(reply, await fileInfo(p.absolute, p.relative === '' ? '/' : basename(p.absolute)), pretty(req));
  }));

  app.get('/v1/client/fs/cat/:alloc', acl.ns('read-fs', 'alloc'), allocRoute(ctx, async (req, reply, allocDir) => {
    const f = await resolveFile(allocDir, req.query);
    return sendFileRange(reply, f, 0, -1);
  }));

  app.get('/v1/client/fs/readat/:alloc', acl.ns('read-fs', 'alloc'), allocRoute(ctx, async (req, reply, allocDir) => {
    const offset = intParam(req.query, 'offset', 0);
    const limit = intParam(req.query, 'limit', -1, true);
    const f = await resolveFile(allocDir, req.query);
    if (offset >= f.size) return sendFileRange(reply, f, 0, 0);
    return sendFileRange(reply, f, offset, limit);
  }));

  app.get('/v1/client/fs/stream/:alloc', acl.ns('read-fs', 'alloc'), allocRoute(ctx, async (req, reply, allocDir) => {
    const offset = intParam(req.query, 'offset', 0);
    const origin = originParam(req.query);
    // Nomad's stream follows unless told otherwise.
    const follow = queryParam(req.query, 'follow') === undefined ? true : queryFlag(req.query, 'follow');
    const plain = queryFlag(req.query, 'plain');
    const limit = intParam(req.query, 'limit', -1, true);
    const f = await resolveFile(allocDir, req.query);
    const start = origin === Origin.End ? Math.max(0, f.size - offset) : Math.min(offset, f.size);
    await streamChunks(req, reply, (signal) => followFile(f.absolute, f.relative, start, { follow, signal, realRoot: f.realRoot, ...(limit > 0 ? { limit } : {}) }), { plain });
  }));
}
