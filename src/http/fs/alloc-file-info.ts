/**
 * Nomad's AllocFileInfo (api/fs.go): what `/v1/client/fs/ls` and `/stat` answer for each file.
 * FileMode is written as Go's os.FileMode.String() does ("-rw-r--r--", "drwxr-xr-x").
 */
import { lstat, open, readdir } from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { join } from 'node:path';

/** One file or directory of an allocation directory, as the API shows it. */
export interface AllocFileInfo {
  Name: string;
  IsDir: boolean;
  Size: number;
  FileMode: string;
  /** RFC 3339. */
  ModTime: string;
  ContentType: string;
}

const RWX = 'rwxrwxrwx';

/** Go's FileMode.String() for the type and permission bits of `st`. */
export function goFileMode(st: Stats): string {
  let type = '-';
  if (st.isDirectory()) type = 'd';
  else if (st.isSymbolicLink()) type = 'L';
  else if (st.isFIFO()) type = 'p';
  else if (st.isSocket()) type = 'S';
  else if (st.isCharacterDevice()) type = 'Dc';
  else if (st.isBlockDevice()) type = 'D';
  let perm = '';
  for (let i = 0; i < 9; i++) perm += st.mode & (1 << (8 - i)) ? RWX[i] : '-';
  return type + perm;
}

/**
 * The content type Go's http.DetectContentType would give the first bytes of a file, reduced
 * to the two answers that matter for logs and configs: text or binary.
 */
export function detectContentType(head: Buffer): string {
  if (head.length === 0) return 'text/plain; charset=utf-8';
  if (head.includes(0)) return 'application/octet-stream';
  const text = head.toString('utf8');
  // A cut multi-byte sequence at the very end is fine; replacement chars elsewhere are not.
  const body = text.endsWith('\uFFFD') ? text.replace(/\uFFFD+$/, '') : text;
  return body.includes('\uFFFD') ? 'application/octet-stream' : 'text/plain; charset=utf-8';
}

async function contentTypeOf(path: string): Promise<string> {
  // No symlink followed and no FIFO waited on: the entry was lstat'ed as a file, but the task may swap it.
  const fh = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const buf = Buffer.alloc(512);
    const { bytesRead } = await fh.read(buf, 0, 512, 0);
    return detectContentType(buf.subarray(0, bytesRead));
  } finally {
    await fh.close();
  }
}

/**
 * Builds the AllocFileInfo of `path` named `name`. Symlinks are described, not followed, so a
 * listing never reveals anything about what lies outside the allocation directory.
 */
export async function fileInfo(path: string, name: string): Promise<AllocFileInfo> {
  const st = await lstat(path);
  const isDir = st.isDirectory();
  let contentType = '';
  if (st.isFile()) contentType = await contentTypeOf(path).catch(() => '');
  return {
    Name: name,
    IsDir: isDir,
    Size: st.size,
    FileMode: goFileMode(st),
    ModTime: st.mtime.toISOString(),
    ContentType: contentType,
  };
}

/** The entries of directory `dir`, sorted by name as Go's ReadDir returns them. */
export async function listDir(dir: string): Promise<AllocFileInfo[]> {
  const names = (await readdir(dir)).sort();
  const out: AllocFileInfo[] = [];
  for (const name of names) {
    try {
      out.push(await fileInfo(join(dir, name), name));
    } catch {
      // The entry vanished between readdir and stat (a rotated log): skip it.
    }
  }
  return out;
}
