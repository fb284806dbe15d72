/**
 * `GET /v1/operator/snapshot`: the whole replicated state as one file, streamed (Caravan's
 * snapshot format — JSON lines with a header naming the index and row counts, the form the
 * log's own snapshots take — gzipped), with `X-Nomad-Index` the state's index and Nomad's
 * `Digest: sha-256=…` header, as `nomad operator snapshot save` and Nomad's Go client read it. Management tokens only, as Nomad.
 * Restoring one into a running cluster (`PUT`) is not supported yet: it answers 501.
 */
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { acl } from '../acl/route-acl.js';
import { HttpError } from '../http-errors.js';
import { requireServer, setQueryMeta, type RouteContext } from '../route-context.js';

const gzipAsync = promisify(gzip);

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

  // Refused before its body is read (a snapshot file is not JSON): whatever the token, nothing changes.
  const restoreUnsupported = (): never => {
    throw new HttpError('HTTP_NOT_SUPPORTED', { feature: 'snapshot restore into a running cluster' });
  };
  app.put('/v1/operator/snapshot', { ...acl.management(), onRequest: async () => restoreUnsupported() }, restoreUnsupported);
}
