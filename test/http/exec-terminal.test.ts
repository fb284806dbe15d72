import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { RELAY_READY_FD, type ExecSpec, type ExecStream } from '../../src/drivers/driver.js';
import { holdsAny } from '../../src/http/exec/held-fds.js';
import { startPtyProcess } from '../../src/http/exec/pty-process.js';

const SCRIPT = '/usr/bin/script';
const ENV = { PATH: process.env.PATH ?? '/usr/bin:/bin', CARAVAN_TEST: 'a b\'c"$d', TERM: 'vt100' };

interface Ran {
  out: string;
  code: number;
}

/** Whether each session must start with no terminal held (so node-pty's fork starts it). */
let forkOnly = false;

/** Waits until every closed terminal is released (just after its session's exit). */
async function released(): Promise<void> {
  for (let i = 0; i < 100 && holdsAny(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(holdsAny(), false, 'every terminal was closed and released');
}

/** Runs `file args` on a new terminal; `onOutput` may drive it. */
async function run(file: string, args: string[], onOutput?: (out: string, p: ExecStream) => void): Promise<Ran> {
  if (forkOnly) await released();
  return new Promise((resolve) => {
    let out = '';
    const spec: ExecSpec = { file, args, cwd: tmpdir(), env: ENV };
    const p: ExecStream = startPtyProcess(spec, undefined, {
      onOutput: (_s, d) => {
        out += d.toString();
        onOutput?.(out, p);
      },
      onExit: (code) => resolve({ out, code }),
    });
  });
}

/** The behaviour every cold terminal session must have, however it was started. */
async function checkTerminalSession(): Promise<void> {
  // The terminal is the controlling terminal: ^C interrupts the foreground process.
  let interrupted = false;
  const ctl = await run('/bin/sh', ['-c', 'tty; ps -o stat= -p $$; echo ready; exec sleep 10'], (out, p) => {
    if (out.includes('ready') && !interrupted) {
      interrupted = true;
      p.write(Buffer.from('\x03'));
    }
  });
  assert.match(ctl.out, /^\/dev\/pts\/\d+\r\n/);
  assert.match(ctl.out, /[A-Z]+s\+/, 'a session leader in the foreground of its terminal');
  assert.equal(ctl.code, 130, ctl.out);

  assert.equal((await run('/bin/sh', ['-c', 'exit 3'])).code, 3);

  const env = await run('/usr/bin/env', []);
  assert.equal(env.code, 0);
  assert.deepEqual(env.out.trim().split('\r\n').sort(), Object.entries(ENV).map(([k, v]) => `${k}=${v}`).sort(), 'exactly the given environment');

  const missing = await run('/nonexistent/command', []);
  assert.equal(missing.code, 127);
  assert.match(missing.out, /nonexistent/);

  let killed = false;
  const kill = await run('/bin/sh', ['-c', 'echo ready; exec sleep 10'], (out, p) => {
    if (out.includes('ready') && !killed) {
      killed = true;
      p.kill();
    }
  });
  assert.equal(kill.code, 137);
}

test('a terminal session is the same whether forked directly (no terminal held) or through the sh step (another terminal open)', async () => {
  // Nothing held: node-pty's fork starts each command.
  forkOnly = true;
  await checkTerminalSession();
  await released();
  forkOnly = false;

  // Another session's terminal is open: commands go through the sh step, which keeps it out.
  let release!: () => void;
  const holder = run('/bin/sh', ['-c', 'echo holding; read x; exit 0'], (out, p) => {
    if (out.includes('holding')) release = () => p.closeStdin();
  });
  for (let i = 0; i < 200 && !release; i++) await new Promise((r) => setTimeout(r, 10));
  assert.equal(holdsAny(), true);
  await checkTerminalSession();
  release();
  assert.equal((await holder).code, 0);
});

test('a relayed terminal (ExecSpec.relayedTerminal): input sent at once waits until the relay says its terminal is up', async (t) => {
  if (!existsSync(SCRIPT)) return t.skip(`${SCRIPT} is missing`);
  // As the exec sandbox relays (sandbox-command.ts), without the sandbox: script(1) on the host,
  // started a moment late as the sandbox's steps make it.
  const inner = `printf . >&${RELAY_READY_FD}; exec ${RELAY_READY_FD}>&-; exec sh -c 'read line; echo "got=$line"; cat; echo "eof"'`;
  const spec: ExecSpec = {
    file: '/bin/false',
    args: [],
    cwd: tmpdir(),
    env: ENV,
    relayedTerminal: { file: '/bin/sh', args: ['-c', 'sleep 0.2; exec "$@"', 'sh', SCRIPT, '--quiet', '--return', '--command', inner, '/dev/null'], env: { ...ENV, SHELL: '/bin/sh' } },
  };
  let out = '';
  let p!: ExecStream;
  const r = await new Promise<Ran>((resolve, reject) => {
    p = startPtyProcess(spec, undefined, { onOutput: (_s, d) => (out += d.toString()), onExit: (code) => resolve({ out, code }) });
    // Typed before the relay even started: its terminal echoes it, once, and ^D ends the command's input.
    p.write(Buffer.from('hello\n'));
    p.closeStdin();
    // An ^D that reached the relay instead leaves the command waiting for input for ever.
    setTimeout(() => reject(new Error(`the session did not end: ${JSON.stringify(out)}`)), 15_000).unref();
  }).finally(() => p.kill());
  assert.equal(r.code, 0, r.out);
  assert.equal(r.out.split('hello').length - 1, 2, `echoed once, read once: ${JSON.stringify(r.out)}`);
  assert.match(r.out, /got=hello\r\n/);
  assert.match(r.out, /eof\r\n/, '^D reached the command as end of input');
});
