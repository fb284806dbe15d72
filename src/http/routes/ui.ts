/**
 * The web UI: `GET /ui/…` serves the assets Vite built into dist/ui (see ui/), `GET /` redirects
 * to `/ui/`. A path that is not a file is a client-side route and gets index.html (deep links
 * work); a missing file under `assets/` is a 404, so a stale page does not run HTML as script.
 * Files are kept in memory with their gzip form (re-read when their mtime changes, so a rebuild
 * under a running agent is picked up), and sent gzipped to browsers that accept it.
 */
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, badRequest } from '../http-errors.js';
import { acl } from '../acl/route-acl.js';

/** Where `npm run build` puts the UI (dist/src/http/routes → dist/ui). */
export const DEFAULT_UI_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../../ui');

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/** Types worth compressing. */
const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.svg', '.map', '.txt']);

/** The content type of a file by its extension. */
export function uiContentType(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

interface CachedFile {
  mtimeMs: number;
  body: Buffer;
  gzip: Buffer | undefined;
}

/** Reads UI files through a small in-memory cache keyed by path and mtime. */
class UiFiles {
  private cache = new Map<string, CachedFile>();

  /** The file, or undefined when `path` is not a regular file. */
  async get(path: string): Promise<CachedFile | undefined> {
    let mtimeMs: number;
    try {
      const st = await stat(path);
      if (!st.isFile()) return undefined;
      mtimeMs = st.mtimeMs;
    } catch {
      return undefined;
    }
    const hit = this.cache.get(path);
    if (hit && hit.mtimeMs === mtimeMs) return hit;
    const body = await readFile(path);
    const gz = COMPRESSIBLE.has(extname(path).toLowerCase()) && body.length > 1024 ? gzipSync(body, { level: 9 }) : undefined;
    const entry: CachedFile = { mtimeMs, body, gzip: gz && gz.length < body.length ? gz : undefined };
    this.cache.set(path, entry);
    return entry;
  }
}

function send(req: FastifyRequest, reply: FastifyReply, file: CachedFile, type: string, cacheControl: string): FastifyReply {
  reply.type(type).header('Cache-Control', cacheControl).header('Vary', 'Accept-Encoding');
  const accepts = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
  if (file.gzip && accepts) return reply.header('Content-Encoding', 'gzip').send(file.gzip);
  return reply.send(file.body);
}

/** Registers `/`, `/ui` (also `/ui/`: the router ignores a trailing slash) and `/ui/*`; `uiDir` is the built UI (default dist/ui). */
export function registerUiRoutes(app: FastifyInstance, uiDir: string = DEFAULT_UI_DIR): void {
  const root = resolve(uiDir);
  const files = new UiFiles();
  app.get('/', acl.public(), (_req, reply) => reply.redirect('/ui/', 307));

  const serve = async (req: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply): Promise<FastifyReply> => {
    let rel: string;
    try {
      rel = decodeURIComponent(req.params['*'] ?? '');
    } catch {
      throw badRequest('invalid path encoding');
    }
    const path = resolve(root, rel);
    // Confined to the UI dir: "../" never reaches the rest of the disk.
    const inside = path === root || path.startsWith(root + sep);
    const file = inside && rel !== '' ? await files.get(path) : undefined;
    if (file) {
      // Vite names assets by content hash: they never change, so the browser may keep them.
      return send(req, reply, file, uiContentType(path), rel.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    }
    if (rel.startsWith('assets/') || !inside) {
      throw new HttpError('HTTP_ROUTE_NOT_FOUND', {});
    }
    const indexPath = join(root, 'index.html');
    const index = await files.get(indexPath);
    if (!index) {
      throw new HttpError('HTTP_UI_NOT_BUILT', { index: indexPath });
    }
    return send(req, reply, index, 'text/html; charset=utf-8', 'no-cache');
  };
  // The router ignores a trailing slash, so `/ui/` arrives as `/ui`, which the wildcard does not
  // match: the front door the README and the `/` redirect name needs a route of its own.
  app.get('/ui', acl.public(), serve);
  app.get('/ui/*', acl.public(), serve);
}
