/**
 * The web UI: `GET /ui/…` serves the assets Vite built into dist/ui (see ui/), `GET /` redirects
 * to `/ui/`. A path that is not a file is a client-side route and gets index.html (deep links
 * work); a missing file under `assets/` is a 404, so a stale page does not run HTML as script.
 */
import { HttpError, badRequest } from '../http-errors.js';
import { readFile, stat } from 'node:fs/promises';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

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

/** The content type of a file by its extension. */
export function uiContentType(path: string): string {
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream';
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Registers `/` and `/ui/*` (`/ui` too: the router ignores a trailing slash); `uiDir` is the built UI (default dist/ui). */
export function registerUiRoutes(app: FastifyInstance, uiDir: string = DEFAULT_UI_DIR): void {
  const root = resolve(uiDir);
  app.get('/', (_req, reply) => reply.redirect('/ui/', 307));

  const serve = async (req: FastifyRequest<{ Params: { '*'?: string } }>, reply: FastifyReply) => {
    let rel: string;
    try {
      rel = decodeURIComponent(req.params['*'] ?? '');
    } catch {
      throw badRequest('invalid path encoding');
    }
    const file = resolve(root, rel);
    // Confined to the UI dir: "../" never reaches the rest of the disk.
    const inside = file === root || file.startsWith(root + sep);
    if (inside && rel !== '' && (await isFile(file))) {
      // Vite names assets by content hash: they never change, so the browser may keep them.
      const immutable = rel.startsWith('assets/');
      return reply
        .type(uiContentType(file))
        .header('Cache-Control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
        .send(await readFile(file));
    }
    if (rel.startsWith('assets/') || !inside) {
      throw new HttpError('HTTP_ROUTE_NOT_FOUND', {});
    }
    const index = join(root, 'index.html');
    if (!(await isFile(index))) {
      throw new HttpError('HTTP_UI_NOT_BUILT', { index });
    }
    return reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-cache').send(await readFile(index));
  };
  app.get('/ui/*', serve);
}
