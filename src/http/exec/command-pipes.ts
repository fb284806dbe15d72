/**
 * The stdin, stdout and stderr of one exec command on anonymous pipes from a PipeStock
 * (pipe-stock.ts): the three descriptors the command is spawned with, and this process's ends
 * as streams (libuv polls them; nothing blocks a thread of its pool).
 */
import { closeSync, fchownSync } from 'node:fs';
import { Socket } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import type { AnonymousPipe, PipeStock } from './pipe-stock.js';

/** This process's ends of a command's stdio, whatever they are made of. */
export interface CommandIo {
  stdin: Writable;
  stdout: Readable;
  stderr: Readable;
}

/** A command's stdio on pipes, before and after it is spawned. */
export interface CommandPipes extends CommandIo {
  /** The spawn `stdio` entries 0–2: stdin's read end, stdout's and stderr's write ends. */
  child: [number, number, number];
  /** Closes the command's ends here, once spawn returned: the command holds the only copies. */
  spawned(): void;
  /** Closes every end still open here (a command that will not run, or has ended). */
  close(): void;
}

/**
 * Three pipes for one command from `stock`, owned by `owner` when given; null when pipes cannot be made here (the command
 * gets Node's sockets), 'wait' when the stock is being refilled (`stock.ready()`).
 */
export function takeCommandPipes(stock: PipeStock, owner?: { uid: number; gid: number }): CommandPipes | null | 'wait' {
  const got = stock.take(3);
  if (!got) return stock.supported ? 'wait' : null;
  const [i, o, e] = got as [AnonymousPipe, AnonymousPipe, AnonymousPipe];
  if (owner) {
    try {
      // One inode per pipe: chowning the command's end makes the whole pipe the user's.
      for (const fd of [i.read, o.write, e.write]) fchownSync(fd, owner.uid, owner.gid);
    } catch {
      // Not root: the command runs as this process's user anyway.
    }
  }
  const stdin = new Socket({ fd: i.write, readable: false, writable: true });
  const stdout = new Socket({ fd: o.read, readable: true, writable: false });
  const stderr = new Socket({ fd: e.read, readable: true, writable: false });
  let childOpen = true;
  const spawned = (): void => {
    if (!childOpen) return;
    childOpen = false;
    for (const fd of [i.read, o.write, e.write]) closeSync(fd);
  };
  return {
    child: [i.read, o.write, e.write],
    stdin,
    stdout,
    stderr,
    spawned,
    close() {
      spawned();
      for (const s of [stdin, stdout, stderr]) s.destroy();
    },
  };
}
