/**
 * Writes a directory tree as a gzip-compressed tar archive (POSIX ustar), as Nomad's
 * `operator debug` packs its bundle (TarCZF): regular files only, named relative to the
 * directory and prefixed with `target`. Small and dependency-free; names up to 255 bytes
 * (ustar's prefix and name fields).
 */
import { createWriteStream, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** Every regular file under `dir`, depth first, sorted. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(p));
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

/** Splits a path into ustar's (prefix, name): name ≤ 100 bytes, prefix ≤ 155, cut at a "/". */
function splitName(path: string): [string, string] {
  if (Buffer.byteLength(path) <= 100) return ['', path];
  for (let i = path.indexOf('/'); i > 0; i = path.indexOf('/', i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(name) <= 100) return [prefix, name];
  }
  throw new Error(`path too long for a tar archive: ${path}`);
}

function octal(n: number, width: number): string {
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

/** One 512-byte ustar header. */
function header(path: string, size: number, mode: number, mtimeSeconds: number): Buffer {
  const h = Buffer.alloc(512);
  const [prefix, name] = splitName(path);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(mode & 0o7777, 8), 100, 'ascii');
  h.write(octal(0, 8), 108, 'ascii');
  h.write(octal(0, 8), 116, 'ascii');
  h.write(octal(size, 12), 124, 'ascii');
  h.write(octal(mtimeSeconds, 12), 136, 'ascii');
  h.write('        ', 148, 'ascii');
  h.write('0', 156, 'ascii');
  h.write('ustar\0', 257, 'ascii');
  h.write('00', 263, 'ascii');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return h;
}

/** The archive's bytes, file by file, then the two empty blocks that end a tar. */
function* tarChunks(dir: string, target: string): Generator<Buffer> {
  for (const file of filesUnder(dir)) {
    const st = statSync(file);
    const data = readFileSync(file);
    yield header(`${target}/${relative(dir, file)}`, data.length, st.mode, Math.floor(st.mtimeMs / 1000));
    yield data;
    const pad = (512 - (data.length % 512)) % 512;
    if (pad > 0) yield Buffer.alloc(pad);
  }
  yield Buffer.alloc(1024);
}

/** Writes `dir` as `archive` (.tar.gz), entries named `<target>/<path in dir>`. */
export async function writeTarGz(archive: string, dir: string, target: string): Promise<void> {
  await pipeline(Readable.from(tarChunks(dir, target)), createGzip(), createWriteStream(archive, { mode: 0o600 }));
}
