/**
 * Malformed frames on an exec websocket, against a real agent (issue 26, "Held": closed with
 * 1008/1009, kept as a test). The session runs `cat`, which would echo any stdin that reached
 * it: a frame that is not JSON, not an object, or carries a field of the wrong type ends the
 * session with 1008 (policy violation) and a reason naming the field; a message over the
 * agent's 16 MiB limit, in one frame or in fragments, ends it with 1009 (message too big). In
 * every case a well-formed stdin frame sent right after reaches nothing, and the agent answers.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import WebSocket from 'ws';
import type { AllocListStub } from '../../src/structs/index.js';
import { api, type AgentProcess } from '../integration/helpers/agent-process.js';
import { jobAllocs, runJob, startDevAgent, teardown, waitFor } from '../integration/helpers/client-agent.js';

const LIMIT = 16 * 1024 * 1024;
const b64 = (s: string) => Buffer.from(s).toString('base64');

const JOB = `
job "shell" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["300"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;

let agent: AgentProcess | undefined;
let dataDir: string;
let alloc: AllocListStub;

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  agent = await startDevAgent({ dataDir });
  await runJob(agent.address, dataDir, 'shell', JOB);
  alloc = await waitFor('the task running', async () => (await jobAllocs(agent!.address, 'shell')).find((a) => a.ClientStatus === 'running'), 30_000);
});

after(async () => {
  await teardown(agent, dataDir);
});

/**
 * Opens an exec of `cat`, hands the socket to `attack`, then sends a well-formed stdin frame and
 * its close; resolves the output and how the socket was closed.
 */
function session(attack: (ws: WebSocket) => void): Promise<{ stdout: string; code: number; reason: string }> {
  const q = new URLSearchParams({ task: 't', command: JSON.stringify(['/bin/cat']), tty: 'false' });
  const ws = new WebSocket(`${agent!.address.replace(/^http/, 'ws')}/v1/client/allocation/${alloc.ID}/exec?${q}`);
  return new Promise((resolve, reject) => {
    let stdout = '';
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('the session was not closed'));
    }, 30_000);
    ws.on('open', () => {
      attack(ws);
      ws.send(JSON.stringify({ stdin: { data: b64('reached-cat\n') } }));
      ws.send(JSON.stringify({ stdin: { close: true } }));
    });
    ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as { stdout?: { data?: string } };
      if (f.stdout?.data) stdout += Buffer.from(f.stdout.data, 'base64').toString('utf8');
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ stdout, code, reason: String(reason) });
    });
    // The agent may reset the connection while an oversized message is still being written.
    ws.on('error', () => {});
  });
}

describe('malformed exec frames end the session', () => {
  it('a well-formed session echoes (the control)', async () => {
    const r = await session(() => {});
    assert.equal(r.code, 1000, r.reason);
    assert.equal(r.stdout, 'reached-cat\n');
  });

  const policyViolations: Array<[string, string | Buffer, RegExp]> = [
    ['text that is not JSON', 'stdin: hello', /not valid JSON/],
    ['truncated JSON', '{"stdin":{"data":"aGk=', /not valid JSON/],
    ['binary garbage', Buffer.from([0xff, 0x00, 0xfe, 0x7b]), /not valid JSON/],
    ['a JSON array', '[{"stdin":{"data":"aGk="}}]', /must be a JSON object/],
    ['a JSON string', '"aGk="', /must be a JSON object/],
    ['JSON null', 'null', /must be a JSON object/],
    ['stdin as a string', '{"stdin":"aGk="}', /stdin must be an object/],
    ['stdin as an array', '{"stdin":["aGk="]}', /stdin must be an object/],
    ['stdin.data as a number', '{"stdin":{"data":12345}}', /stdin\.data/],
    ['stdin.data as an object', '{"stdin":{"data":{"$gt":""}}}', /stdin\.data/],
    ['stdin.close as a string', '{"stdin":{"close":"yes"}}', /stdin\.close/],
    ['tty_size as a string', '{"tty_size":"80x24"}', /tty_size/],
    ['tty_size.height negative', '{"tty_size":{"height":-1,"width":80}}', /tty_size\.height/],
    ['tty_size.width huge', '{"tty_size":{"height":24,"width":1e12}}', /tty_size\.width/],
    ['tty_size.width fractional', '{"tty_size":{"height":24,"width":80.5}}', /tty_size\.width/],
  ];
  for (const [what, frame, reason] of policyViolations) {
    it(`${what}: 1008`, async () => {
      const r = await session((ws) => ws.send(frame, { binary: Buffer.isBuffer(frame) }));
      assert.equal(r.code, 1008, `${r.code} ${r.reason}`);
      assert.match(r.reason, reason);
      assert.equal(r.stdout, '', 'nothing reached the command');
    });
  }

  it('a message over 16 MiB in one frame: 1009', async () => {
    const r = await session((ws) => ws.send(JSON.stringify({ stdin: { data: 'A'.repeat(LIMIT) } })));
    assert.equal(r.code, 1009, `${r.code} ${r.reason}`);
    assert.equal(r.stdout, '');
  });

  it('a message over 16 MiB in 1 MiB fragments: 1009', async () => {
    const r = await session((ws) => {
      const chunk = 'A'.repeat(1024 * 1024);
      ws.send(`{"stdin":{"data":"${chunk}`, { fin: false });
      for (let i = 0; i < 17; i++) ws.send(chunk, { fin: false });
      ws.send('"}}', { fin: true });
    });
    assert.equal(r.code, 1009, `${r.code} ${r.reason}`);
    assert.equal(r.stdout, '');
  });

  it('the agent still answers, and a session after them works', async () => {
    assert.equal((await api(agent!.address, 'GET', '/v1/agent/health')).status, 200);
    const r = await session(() => {});
    assert.equal(r.stdout, 'reached-cat\n');
  });
});
