/**
 * `GET /v1/client/fs/logs/:alloc?task=&type=stdout|stderr&follow=&offset=&origin=&plain=` —
 * a task's log read across its rotated files in order, framed (StreamFrame lines) or plain,
 * optionally followed as the task writes and rotates. Forwarded when the client is elsewhere.
 */
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { followLogs } from '../fs/file-follower.js';
import { intParam, originParam, requiredParam } from '../fs/fs-query.js';
import { listLogFiles, locateOffset, LOG_DIR_RELATIVE } from '../fs/log-files.js';
import { localAllocDir } from '../fs/local-alloc-dir.js';
import { streamChunks } from '../fs/stream-response.js';
import { forwardHttp } from '../forward/http-forward.js';
import { requestTarget } from '../forward/request-target.js';
import { HttpError, HttpErrorCode } from '../http-errors.js';
import { queryFlag, type RawQuery } from '../query-options.js';
import { logTypeParam } from '../fs/fs-query.js';
import type { RouteContext } from '../route-context.js';

type LogsReq = FastifyRequest<{ Params: { alloc: string }; Querystring: RawQuery }>;

/** Registers the logs route. */
export function registerClientLogsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/client/fs/logs/:alloc', async (req: LogsReq, reply: FastifyReply) => {
    const target = requestTarget(ctx, req.params.alloc, req.headers);
    if (target.kind === 'remote') return forwardHttp(req, reply, target.remote);
    const q = req.query;
    const task = requiredParam(q, 'task', 'the task whose logs to read');
    if (task.includes('/') || task.includes('\0') || task === '.' || task === '..') {
      throw new HttpError(HttpErrorCode.BadRequest, 400, `invalid value for "task": ${JSON.stringify(task)}`);
    }
    const type = logTypeParam(q);
    const follow = queryFlag(q, 'follow');
    const plain = queryFlag(q, 'plain');
    const offset = intParam(q, 'offset', 0);
    const origin = originParam(q);
    const allocDir = localAllocDir(target.client, req.params.alloc);
    const files = await listLogFiles(join(allocDir, LOG_DIR_RELATIVE), task, type);
    if (files.length === 0 && !follow) {
      throw new HttpError(HttpErrorCode.NotFound, 404, `log entry for task "${task}" and log type "${type}" not found`);
    }
    const start = locateOffset(files, offset, origin);
    await streamChunks(req, reply, (signal) => followLogs(allocDir, task, type, start, { follow, signal }), { plain });
  });
}
