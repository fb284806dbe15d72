import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import pty from '@lydell/node-pty';
import type { AllocListStub } from '../../src/structs/index.js';
import { api, CARAVAN_BIN, REPO_ROOT, runCli, startAgent } from './helpers/agent-process.js';
import { waitUntil } from './helpers/poseidon-client.js';

const TICKER = 'i=0; while true; do i=$((i+1)); echo line-$i; sleep 0.2; done';

test('CLI against a dev agent: alloc exec -i -t through a pseudo-terminal, alloc logs -f, remote flags', async () => {
  const agent = await startAgent({ roleArgs: ['-dev'] });
  const env = { ...process.env, CARAVAN_ADDR: agent.address, NOMAD_ADDR: '' } as Record<string, string>;
  try {
    const job = {
      ID: 'ticker',
      Type: 'service',
      Datacenters: ['dc1'],
      TaskGroups: [{ Name: 'g', Count: 1, Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', TICKER] }, Resources: { CPU: 50, MemoryMB: 32 } }] }],
    };
    const reg = await api(agent.address, 'PUT', '/v1/jobs', { Job: job });
    assert.equal(reg.status, 200, reg.text);
    const alloc = await waitUntil('ticker running', async () => {
      const l = await api<AllocListStub[]>(agent.address, 'GET', '/v1/job/ticker/allocations');
      return l.body.find((a) => a.ClientStatus === 'running');
    });
    const short = alloc.ID.slice(0, 8);

    // An interactive shell through a real local terminal.
    const term = pty.spawn(process.execPath, [CARAVAN_BIN, 'alloc', 'exec', '-i', '-t', short, '/bin/sh'], { cwd: REPO_ROOT, env, cols: 100, rows: 30, name: 'xterm' });
    let screen = '';
    term.onData((d) => (screen += d));
    const exited = new Promise<number>((r) => term.onExit(({ exitCode }) => r(exitCode)));
    try {
      await waitUntil('remote shell prompt', () => /[$#] $/.test(screen), 15_000);
      term.write('echo hello-$((1+2))\r');
      await waitUntil('hello-3 from the remote shell', () => /hello-3/.test(screen), 15_000);
      term.write('exit 4\r');
      const code = await Promise.race([exited, new Promise<number>((_, rej) => setTimeout(() => rej(new Error(`no exit; screen: ${screen}`)), 15_000))]);
      assert.equal(code, 4, screen);
    } finally {
      term.kill();
    }

    // The remote command's own flags are not taken for caravan's.
    const ls = await runCli(agent.address, ['alloc', 'exec', '-task', 't', short, 'ls', '-la', '/']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.match(ls.stdout, /^total \d+/m);
    const sh = await runCli(agent.address, ['alloc', 'exec', short, 'sh', '-c', 'echo -t; exit 2']);
    assert.equal(sh.code, 2, sh.stderr);
    assert.equal(sh.stdout, '-t\n');

    // logs -f follows: two successive lines arrive from the running process.
    const follow = spawn(process.execPath, [CARAVAN_BIN, 'alloc', 'logs', '-f', short, 't'], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    follow.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      const atStart = await waitUntil('first followed line', () => out.match(/line-(\d+)\n/g)?.length, 10_000);
      const firstSeen = out.match(/line-(\d+)\n/g)!;
      const lastAtStart = Number(/line-(\d+)/.exec(firstSeen[firstSeen.length - 1]!)![1]);
      assert.ok(atStart >= 1);
      // Lines written after the follow began arrive, in order.
      await waitUntil('two later lines', () => out.includes(`line-${lastAtStart + 2}\n`), 10_000);
      assert.ok(out.indexOf(`line-${lastAtStart + 1}\n`) < out.indexOf(`line-${lastAtStart + 2}\n`));
      assert.equal(follow.exitCode, null, 'still following');
    } finally {
      follow.kill('SIGINT');
    }
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
