/**
 * The agent takes the ends of a docker exec's pipes from the container's resident shell through
 * /proc/<shell>/fd/N (shell-pipe-ends.ts). A container controls its own processes, so what it
 * could put at those fds is tried here with a local process in the shell's place: a file it may
 * only read (root's write open must not be kept, nor anything written), a named FIFO without a
 * reader (no open may block the agent), a socket — each refused. The shell's real
 * here-document pipes are taken.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PipeEndRefused, ShellPipeEnds } from '../../src/drivers/docker/shell-pipe-ends.js';

/** Starts sh with `redirections` applied, waiting until it has them. */
async function holder(redirections: string): Promise<ChildProcess> {
  const child = spawn('/bin/sh', ['-c', `exec ${redirections}\necho ready; exec sleep 100 </dev/null`], { stdio: ['pipe', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once('data', () => resolve());
    child.once('exit', (code) => reject(new Error(`holder exited ${code}`)));
  });
  return child;
}

test('docker exec pipe ends: a file, a named FIFO or a socket at the shell\'s fds is refused without blocking or writing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-pipe-ends-'));
  const victim = join(dir, 'victim');
  writeFileSync(victim, 'host file\n', { mode: 0o444 });
  const fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  const before = statSync(victim);
  const cases: Array<[string, string]> = [
    ['a read-only file at stdin\'s fd', `7<${victim} 8<&0 9<&0`],
    ['a named FIFO with a writer at stdout\'s fd', `7<<'E' 8<>${fifo} 9<&0\nE`],
    ['a named FIFO at stdin\'s fd, nobody else reading', `7<>${fifo} 8<&0 9<&0`],
    ['a socket (Node\'s stdio) everywhere', `7<&0 8<&0 9<&0`],
  ];
  try {
    for (const [what, redirections] of cases) {
      const sh = await holder(redirections);
      try {
        const ends = ShellPipeEnds.open(sh.pid!, process.pid);
        try {
          assert.throws(() => ends.take(), PipeEndRefused, what);
        } finally {
          ends.close();
        }
      } finally {
        sh.kill('SIGKILL');
      }
    }
    assert.equal(readFileSync(victim, 'utf8'), 'host file\n');
    assert.equal(statSync(victim).mtimeMs, before.mtimeMs, 'the file was not written');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('docker exec pipe ends: a process in another pid namespace is not taken for the shell', { skip: process.getuid?.() !== 0 ? 'needs root (unshare -p)' : false }, async () => {
  const other = spawn('unshare', ['-p', '-f', '--mount-proc', 'sleep', '100'], { stdio: 'ignore' });
  try {
    // unshare forks the namespace's first process; it is what the "container" would be.
    let inner = 0;
    for (let i = 0; i < 100 && !inner; i++) {
      await new Promise((r) => setTimeout(r, 20));
      inner = Number(readFileSync(`/proc/${other.pid}/task/${other.pid}/children`, 'utf8').trim().split(/\s+/)[0] ?? 0);
    }
    assert.ok(inner > 0, 'the namespace has its first process');
    assert.throws(() => ShellPipeEnds.open(process.pid, inner), PipeEndRefused);
  } finally {
    other.kill('SIGKILL');
  }
});

test('docker exec pipe ends: the shell\'s here-document pipes are taken, stdin to write and stdout/stderr to read', async () => {
  const sh = await holder(`7<<'E' 8<<'E' 9<<'E'\nE\nE\nE`);
  try {
    const ends = ShellPipeEnds.open(sh.pid!, process.pid);
    try {
      const got = ends.take();
      for (const fd of [got.stdin, got.stdout, got.stderr]) assert.match(readlinkSync(`/proc/self/fd/${fd}`), /^pipe:\[\d+\]$/);
    } finally {
      ends.close();
    }
  } finally {
    sh.kill('SIGKILL');
  }
});
