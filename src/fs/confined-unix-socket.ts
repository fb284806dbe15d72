/**
 * A Unix socket the agent listens on inside a directory a task can write (the Task API's
 * `secrets/api.sock`), made without following any symlink the task planted:
 *
 * - the directory is opened with O_NOFOLLOW from its trusted root (confined-fs.ts) and the
 *   socket is bound through the descriptor (`/proc/self/fd/N/name`), so neither a symlinked
 *   directory nor a long data-dir path (sun_path holds 108 bytes) matters;
 * - whatever non-directory the task left under the name is unlinked (the entry, never its
 *   target); bind(2) never follows a symlink that appears in between, it fails EADDRINUSE;
 * - the mode comes from the umask at bind time, the owner from lchown: neither follows a symlink
 *   swapped in after the bind, as chmod(2) by name would.
 *
 * The directory descriptor stays open until the server has closed: libuv unlinks the socket by
 * its bind path on close, and that path must still name the same directory then.
 */
import { closeSync, fchmodSync, fstatSync, lchownSync, lstatSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { ConfinementCode, ConfinementError, errnoReason, openDirNoFollowSync, pathAt, unlinkAtSync } from './confined-fs.js';

/** Who may connect to the socket: its owner, mode 0600. */
export interface SocketOwner {
  uid: number;
  gid: number;
}

/** Options of listenConfinedUnixSocket. */
export interface ConfinedSocketOptions {
  /** The trusted directory (the task's directory; the agent's own). */
  root: string;
  /** The directory below `root` the socket goes in ("secrets"); walked without following symlinks. */
  dir: string;
  /** The socket's file name. */
  name: string;
  /** Chown the socket to this user (root agents only); else it stays the agent's, mode 0600. */
  owner: SocketOwner | null;
  /** Called for every accepted connection. */
  onConnection: (socket: Socket) => void;
}

/** A listening confined socket. */
export interface ConfinedSocket {
  /** Stops listening, ends the connections it accepted and removes the socket. Idempotent. */
  close(): Promise<void>;
  /** Whether the socket was handed to `owner` (false: it is the agent's user's only). */
  readonly owned: boolean;
}

/** Only the owner may connect: the umask while binding (also only ever narrows what other threads create then). */
const SOCKET_UMASK = 0o177;

/**
 * Listens on `<root>/<dir>/<name>` (see the file comment). Throws ConfinementError when the
 * directory is missing or a symlink, or a directory sits under the name; a bind error otherwise.
 */
export async function listenConfinedUnixSocket(opts: ConfinedSocketOptions): Promise<ConfinedSocket> {
  const dirFd = openDirNoFollowSync(opts.root, opts.dir);
  const connections = new Set<Socket>();
  const server = createServer((sock) => {
    connections.add(sock);
    sock.once('close', () => connections.delete(sock));
    opts.onConnection(sock);
  });
  let fdOpen = true;
  const closeFd = (): void => {
    if (!fdOpen) return;
    fdOpen = false;
    closeSync(dirFd);
  };
  try {
    const at = pathAt(dirFd, opts.name);
    removeStale(at, dirFd, opts.name);
    await bindWithUmask(server, at);
    let owned = false;
    if (opts.owner && process.getuid?.() === 0) {
      lchownSync(at, opts.owner.uid, opts.owner.gid);
      // The owner must reach the socket through the directory: search, not list.
      const st = fstatSync(dirFd);
      if (opts.owner.uid !== st.uid) fchmodSync(dirFd, (st.mode & 0o777) | 0o711);
      owned = true;
    }
    let closing: Promise<void> | undefined;
    return {
      owned,
      close: () => {
        closing ??= new Promise<void>((resolve) => {
          server.close(() => {
            closeFd();
            resolve();
          });
          for (const c of connections) c.destroy();
        });
        return closing;
      },
    };
  } catch (err) {
    if (server.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    closeFd();
    throw err;
  }
}

/** Unlinks what a previous agent or the task left under the name; a directory is refused, not emptied. */
function removeStale(at: string, dirFd: number, name: string): void {
  let isDir: boolean;
  try {
    isDir = lstatSync(at).isDirectory();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new ConfinementError(ConfinementCode.BadPath, `cannot inspect ${JSON.stringify(name)}: ${errnoReason(err)}`, { cause: err });
  }
  if (isDir) throw new ConfinementError(ConfinementCode.NotRegular, `${JSON.stringify(name)} is a directory`);
  unlinkAtSync(dirFd, name);
}

/** Binds (synchronously, inside listen) under the socket umask, and waits for listening or the error. */
function bindWithUmask(server: Server, at: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const onError = (err: Error): void => reject(err);
    server.once('error', onError);
    // Set, then narrowed to include the previous mask: other threads' files never get wider modes.
    const previous = process.umask(SOCKET_UMASK);
    process.umask(previous | SOCKET_UMASK);
    try {
      server.listen(at, () => {
        server.off('error', onError);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
}
