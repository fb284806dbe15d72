/**
 * `GET /v1/client/fs/logs/:alloc?task=&type=stdout|stderr&follow=&offset=&origin=&plain=` —
 * a task's log read across its rotated files in order, framed (StreamFrame lines) or plain,
 * optionally followed as the task writes and rotates. Forwarded when the client is elsewhere.
 * A follow is cut when its token is deleted or expires (held in the gate's live authorizations).
 */
import { closeSync } from 'node:fs';
import { join } from 'node:path';
import { ConfinementCode, ConfinementError, openDirNoFollowSync } from '../../fs/confined-fs.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { allocFsFailure, resolveAllocPath } from '../fs/alloc-path.js';
import { followLogs } from '../fs/file-follower.js';
import { intParam, originParam, requiredParam } from '../fs/fs-query.js';
import { listLogFiles, locateOffset, LOG_DIR_RELATIVE } from '../fs/log-files.js';
import { localAllocDir } from '../fs/local-alloc-dir.js';
import { streamChunks } from '../fs/stream-response.js';
import { forwardHttp } from '../forward/http-forward.js';
import { requestTarget } from '../forward/request-target.js';
import { badRequest, notFound } from '../http-errors.js';
import { queryFlag, type RawQuery } from '../query-options.js';
import { logTypeParam } from '../fs/fs-query.js';
import type { RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

/** Throws a ConfinementError (403) when `alloc/logs` is reached through a symlink; a missing directory is left to the reader. */
function assertLogDirNotLinked(allocDir: string): void {
  try {
    closeSync(openDirNoFollowSync(allocDir, LOG_DIR_RELATIVE));
  } catch (err) {
    if (!(err instanceof ConfinementError) || err.code !== ConfinementCode.NotFound) throw err;
  }
}

type LogsReq = FastifyRequest<{ Params: { alloc: string }; Querystring: RawQuery }>;

/** Registers the logs route. */
export function registerClientLogsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/client/fs/logs/:alloc', acl.ns('read-logs', 'alloc'), async (req: LogsReq, reply: FastifyReply) => {
    ctx.gate.holdRequest(req, reply, () => reply.raw.destroy());
    const target = requestTarget(ctx, req.params.alloc, req.headers);
    if (target.kind === 'remote') return forwardHttp(req, reply, target.remote, ctx.tls);
    try {
      return await serveLogs(req, reply, localAllocDir(target.client, req.params.alloc));
    } catch (err) {
      // Answered naming the log directory as the API does, never where it lives on this machine.
      throw allocFsFailure(err, LOG_DIR_RELATIVE);
    }
  });
}

/** Answers a logs request from the allocation directory `allocDir` on this machine. */
async function serveLogs(req: LogsReq, reply: FastifyReply, allocDir: string): Promise<void> {
  const q = req.query;
  const task = requiredParam(q, 'task', 'the task whose logs to read');
  if (task.includes('/') || task.includes('\0') || task === '.' || task === '..') {
    throw badRequest(`invalid value for "task": ${JSON.stringify(task)}`);
  }
  const type = logTypeParam(q);
  const follow = queryFlag(q, 'follow');
  const plain = queryFlag(q, 'plain');
  const offset = intParam(q, 'offset', 0);
  const origin = originParam(q);
  // Every read below is checked against the allocation's real directory (src/fs/confined-fs.ts).
  const realRoot = (await resolveAllocPath(allocDir, '/')).absolute;
  // The log directory is the task's: refuse it up front when it is a symlink (403), rather than mid-stream.
  assertLogDirNotLinked(allocDir);
  const files = await listLogFiles(join(allocDir, LOG_DIR_RELATIVE), task, type);
  if (files.length === 0 && !follow) {
    throw notFound(`log entry for task "${task}" and log type "${type}"`);
  }
  const start = locateOffset(files, offset, origin);
  await streamChunks(req, reply, (signal) => followLogs(allocDir, task, type, start, { follow, signal, realRoot }), { plain });
}
