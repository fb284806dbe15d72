/**
 * `GET /v1/operator/snapshot`: the whole replicated state as one file (Caravan's snapshot format
 * — JSON lines with a header naming the index and row counts, the form the log's own snapshots
 * take — gzipped), with `X-Nomad-Index` the state's index and Nomad's `Digest: sha-256=…`
 * header, as `nomad operator snapshot save` and Nomad's Go client read it.
 *
 * `PUT /v1/operator/snapshot`: restores such a file into the running cluster, as Nomad's
 * `operator snapshot restore`. The body is the file, bytes as they are (whatever the content
 * type); it is checked whole — gzip's checksum, format version, every line, the counts — before
 * anything changes (400 naming the problem), then applied through the log so every server ends
 * with the restored state (server.ts restoreSnapshot). Management tokens only, as Nomad.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { requireServer, setQueryMeta, type RouteContext } from '../route-context.js';

const gzipAsync = promisify(gzip);

/** The largest snapshot file a restore takes. */
const RESTORE_BODY_LIMIT = 1024 * 1024 * 1024;

/** Registers /v1/operator/snapshot. */
export function registerOperatorSnapshotRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/operator/snapshot', acl.management(), async (_req, reply) => {
    const server = requireServer(ctx);
    if (!server.saveSnapshot) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'snapshot save' });
    const snap = server.saveSnapshot();
    // Nomad's clients check the file against the Digest header, which must precede the body:
    // the file is built whole (compressed off the event loop) before it is sent.
    const file = await gzipAsync(Buffer.concat([...snap.chunks]));
    setQueryMeta(reply, Math.max(1, snap.index), server);
    reply.header('Content-Type', 'application/octet-stream');
    reply.header('Digest', `sha-256=${createHash('sha256').update(file).digest('base64')}`);
    return reply.send(file);
  });

  // Its own context: the body is the snapshot file's bytes, not the JSON every other route reads.
  void app.register(async (raw) => {
    raw.removeAllContentTypeParsers();
    raw.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: RESTORE_BODY_LIMIT }, (_req, body, done) => done(null, body));
    raw.put('/v1/operator/snapshot', { ...acl.management(), bodyLimit: RESTORE_BODY_LIMIT }, async (req, reply) => {
      const server = requireServer(ctx);
      if (!server.restoreSnapshot) throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'snapshot restore' });
      const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (body.length === 0) throw new HttpError('HTTP_BAD_REQUEST', { reason: 'snapshot not restored: the body must be a snapshot file (it is empty)' });
      const { index } = await server.restoreSnapshot(body);
      setQueryMeta(reply, index, server);
      return reply.send({ Index: index });
    });
  });
}
