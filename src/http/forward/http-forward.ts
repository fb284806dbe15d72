/**
 * Proxies one HTTP request to the client agent holding the allocation and streams its answer
 * back as it comes (log follow, file streams), so a server is a transparent hop.
 */
import { ErrorCatalogue } from '../../structs/error-catalogue.js';
import { request as httpRequest, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { withScheme, type OutboundTls } from '../../tls/tls-config.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { HttpError } from '../http-errors.js';
import { FORWARDED_HEADER, type RemoteClient } from './alloc-target.js';

/** Headers that describe one hop and must not be passed on. */
const HOP_HEADERS = new Set([
  'connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'host', 'te', 'trailer', 'content-length',
]);

/** Copies end-to-end headers of `h`, dropping hop-by-hop ones. */
export function endToEndHeaders(h: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !HOP_HEADERS.has(k.toLowerCase())) out[k] = v;
  return out;
}

/** The error code of a failed forward. */

/**
 * Sends `req` to `remote` and pipes the response into `reply` (hijacked once the remote
 * answers). Rejects with a 502 HttpError if the remote cannot be reached.
 */
export function forwardHttp(req: FastifyRequest, reply: FastifyReply, remote: RemoteClient, tls?: OutboundTls): Promise<void> {
  const url = new URL(req.url, withScheme(remote.baseUrl, tls !== undefined));
  const body = req.body === undefined || req.body === null ? undefined : JSON.stringify(req.body);
  const headers = endToEndHeaders(req.headers);
  headers[FORWARDED_HEADER] = '1';
  if (body !== undefined) headers['content-length'] = Buffer.byteLength(body);
  return new Promise((resolve, reject) => {
    // With TLS the hop is mutual TLS: the client agent's certificate is checked against the CA.
    const send = tls ? httpsRequest : httpRequest;
    const out = send(url, { method: req.method, headers, ...(tls ? { agent: tls.clientAgent } : {}) }, (res) => {
      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(res.statusCode ?? ErrorCatalogue.HTTP_FORWARD_FAILED.status, endToEndHeaders(res.headers));
      raw.flushHeaders();
      res.on('data', (d: Buffer) => raw.write(d));
      res.on('end', () => {
        raw.end();
        resolve();
      });
      res.on('error', () => {
        raw.destroy();
        resolve();
      });
      raw.on('close', () => {
        res.destroy();
        out.destroy();
        resolve();
      });
    });
    out.on('error', (err) => {
      if (reply.sent || reply.raw.headersSent) return resolve();
      reject(new HttpError('HTTP_FORWARD_FAILED', { node: remote.nodeId, address: remote.baseUrl, reason: err.message }, { cause: err }));
    });
    if (body !== undefined) out.write(body);
    out.end();
  });
}
