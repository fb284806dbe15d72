/**
 * The directory a debug bundle is collected into, in Nomad's layout (`cluster/`, `server/<name>/`,
 * `client/<node id>/`, `interval/<nnnn>/`, `index.json`, `index.html`): every file written
 * through it is recorded in the manifest, and no file name can leave the directory (names
 * are cleaned of separators, and the resolved path is checked), since node IDs and server
 * names come from the cluster.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { CaravanError } from '../../structs/caravan-error.js';

/** A bundle file whose path would leave the capture directory. */
export class CaptureEscapeError extends CaravanError<'HTTP_BAD_REQUEST'> {
  constructor(path: string) {
    super('HTTP_BAD_REQUEST', { reason: `file path ${JSON.stringify(path)} escapes the capture directory` });
    this.name = 'CaptureEscapeError';
  }
}

/** A file or directory name with anything but letters, digits, ".", "-" and "_" replaced by "_" (Nomad's CleanFilename). */
export function cleanName(name: string): string {
  const cleaned = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return cleaned === '' || cleaned === '.' || cleaned === '..' ? '_' : cleaned;
}

/** The capture directory and its manifest. */
export class DebugCapture {
  /** Paths written, relative to the directory, in order. */
  readonly manifest: string[] = [];

  constructor(readonly dir: string) {}

  /** The absolute path of `file` under `parts` (each cleaned), recorded in the manifest; throws CaptureEscapeError if it would leave the directory. */
  path(parts: readonly string[], file: string): string {
    const rel = join(...parts.map(cleanName), cleanName(file));
    const abs = resolve(this.dir, rel);
    if (!abs.startsWith(resolve(this.dir) + sep)) throw new CaptureEscapeError(rel);
    mkdirSync(resolve(abs, '..'), { recursive: true, mode: 0o700 });
    this.manifest.push(relative(this.dir, abs));
    return abs;
  }

  /** Writes bytes or text. */
  write(parts: readonly string[], file: string, data: string | Uint8Array): void {
    writeFileSync(this.path(parts, file), data, { mode: 0o600 });
  }

  /** Writes a value as JSON, or `{"Error": …}` when fetching it failed (Nomad's errorWrapper). */
  writeJson(parts: readonly string[], file: string, value: unknown, error?: unknown): void {
    this.write(parts, file, JSON.stringify(error === undefined ? value : { Error: error instanceof Error ? error.message : String(error) }));
  }

  /** Writes a list as newline-delimited JSON, or `{"Error": …}` (Nomad's writeResponseStreamOrErrorToFile). */
  writeNdjson(parts: readonly string[], file: string, items: unknown[] | undefined, error?: unknown): void {
    if (error !== undefined || items === undefined) return this.writeJson(parts, file, undefined, error ?? 'no answer');
    this.write(parts, file, items.map((i) => `${JSON.stringify(i)}\n`).join(''));
  }

  /** Writes index.json (the manifest) and index.html (a page linking every file). */
  writeIndex(title: string): void {
    const files = [...this.manifest];
    writeFileSync(join(this.dir, 'index.json'), `${JSON.stringify(files)}\n`, { mode: 0o600 });
    const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
    const html = [`<html><head><title>${esc(title)}</title></head>`, `<body><h1>${esc(title)}</h1>`, '<ul>', ...files.map((f) => `<li><a href="${esc(f)}">${esc(f)}</a></li>`), '</ul></body></html>', ''];
    writeFileSync(join(this.dir, 'index.html'), html.join('\n'), { mode: 0o600 });
  }
}
