/**
 * The node simulator bench stops the processes it started however it ends (bench-teardown.ts):
 * a stand-in bench (nodesim-teardown-child.ts) starts a real child process, then crashes on an
 * uncaught exception or an unhandled rejection, or is sent SIGTERM or SIGINT; its child must be
 * gone when it has exited, and its exit code say how it ended.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./nodesim-teardown-child.js', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const rows: { name: string; how: string; signal?: NodeJS.Signals; code: number }[] = [
  { name: 'an uncaught exception', how: 'throw', code: 1 },
  { name: 'an unhandled rejection', how: 'reject', code: 1 },
  { name: 'SIGTERM', how: 'wait', signal: 'SIGTERM', code: 143 },
  { name: 'SIGINT', how: 'wait', signal: 'SIGINT', code: 130 },
];

for (const row of rows) {
  test(`the bench stops the server it started on ${row.name}`, async () => {
    const bench = spawn(process.execPath, [CHILD, row.how], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    bench.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = once(bench, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
    while (!out.includes('\n') && bench.exitCode === null) await new Promise((r) => setTimeout(r, 10));
    const serverPid = Number(out.trim());
    assert.ok(serverPid > 0, `the stand-in printed its server's pid: ${JSON.stringify(out)}`);
    try {
      if (row.signal) bench.kill(row.signal);
      const [code] = await exited;
      assert.equal(code, row.code, `exit code after ${row.name}`);
      assert.equal(alive(serverPid), false, `the server outlived the bench after ${row.name}`);
    } finally {
      if (alive(serverPid)) process.kill(serverPid, 'SIGKILL');
    }
  });
}
