import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { FrameDecoder } from '../../src/cli/commands/monitor.js';
import { api, CARAVAN_BIN, REPO_ROOT, startAgent } from './helpers/agent-process.js';

/** Reads the monitor stream at `path` until a chunk satisfies `done`; answers what was read. */
async function follow(address: string, path: string, trigger: () => Promise<unknown>, done: (text: string) => boolean): Promise<string> {
  const ac = new AbortController();
  const res = await fetch(`${address}${path}`, { signal: ac.signal });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  let text = '';
  const timer = setTimeout(() => ac.abort(), 10_000);
  try {
    await trigger();
    while (!done(text)) {
      const { value, done: ended } = await reader.read();
      assert.ok(!ended, 'the monitor stream ended');
      text += Buffer.from(value).toString('utf8');
    }
    return text;
  } finally {
    clearTimeout(timer);
    ac.abort();
  }
}

test('agent monitor streams the agent log lines as Nomad frames, as plain text, and through the CLI', async () => {
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const a = agent.address;
    // Frames: {"Data": base64} back to back; with log_json each line is the agent's JSON.
    const framed = await follow(a, '/v1/agent/monitor?log_level=debug&log_json=true', () => api(a, 'GET', '/v1/node/pool/monitored-missing'), (t) => {
      const lines = new FrameDecoder().push(t);
      return lines.some((l) => l.includes('monitored-missing'));
    });
    const lines = new FrameDecoder().push(framed);
    const hit = lines.find((l) => l.includes('monitored-missing'))!;
    assert.equal((JSON.parse(hit) as { level: number }).level, 20, hit);

    // Plain text in Nomad's format; a warn-level monitor misses the debug line but not itself failing.
    const plain = await follow(a, '/v1/agent/monitor?log_level=debug&plain=true', () => api(a, 'GET', '/v1/node/pool/plain-missing'), (t) => t.includes('plain-missing'));
    assert.match(plain, /\[DEBUG\] http: HTTP request rejected/);
    const bad = await api(a, 'GET', '/v1/agent/monitor?log_level=loud');
    assert.equal(bad.status, 400);
    assert.match(bad.text, /invalid log_level "loud"/);

    // The CLI prints the lines until stopped.
    const cli = spawn(process.execPath, [CARAVAN_BIN, 'monitor', '-log-level', 'debug'], { cwd: REPO_ROOT, env: { ...process.env, CARAVAN_ADDR: a, NOMAD_ADDR: '' } });
    let out = '';
    cli.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    try {
      // The CLI's own start (a node process loading the CLI) can take seconds on a loaded machine.
      const deadline = Date.now() + 30_000;
      while (!out.includes('cli-missing')) {
        assert.ok(Date.now() < deadline, `the CLI printed no line: ${out}`);
        await api(a, 'GET', '/v1/node/pool/cli-missing');
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.match(out, /\[DEBUG\] http: HTTP request rejected/);
    } finally {
      cli.kill('SIGTERM');
    }
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
