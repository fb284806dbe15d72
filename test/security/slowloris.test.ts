/**
 * Slowloris against a real agent (issue 26, "Held": 4,000 slow connections did not starve
 * /v1/agent/health, kept as a test): 4,000 loopback TCP connections each send the start of a
 * request and then one more header line every second, never finishing it. While they are all
 * open, /v1/agent/health and an API read answer on fresh connections, and once the attackers
 * are gone the agent is still there. Every connection is closed at the end.
 *
 * Both ends hold a descriptor per connection; the test checks the process limit first and
 * refuses to run, saying why, where it is too low.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { api, type AgentProcess } from '../integration/helpers/agent-process.js';
import { startDevAgent, teardown } from '../integration/helpers/client-agent.js';

const CONNECTIONS = 4000;
/** Connections opened at once (the listen backlog is not the thing under test). */
const BATCH = 200;
/** How long to wait for a health answer before calling the agent starved. */
const ANSWER_WITHIN_MS = 10_000;

let agent: AgentProcess | undefined;
let dataDir: string;
const sockets: Socket[] = [];

/** The open-files limit this process (and the agent it starts) runs under. */
function openFilesLimit(): number {
  const out = execFileSync('/bin/sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).trim();
  return out === 'unlimited' ? Infinity : Number(out);
}

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  agent = await startDevAgent({ dataDir });
});

after(async () => {
  for (const s of sockets) s.destroy();
  await teardown(agent, dataDir);
});

/** Opens one slow connection: a request line and a header, and nothing that would end the headers. */
function slowConnection(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1');
    s.setNoDelay(true);
    s.once('connect', () => {
      s.write(`GET /v1/agent/health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow-0: a\r\n`);
      s.removeListener('error', reject);
      s.on('error', () => { /* reset by the agent: counted as closed below */ });
      resolve(s);
    });
    s.once('error', reject);
  });
}

async function health(address: string): Promise<number> {
  const res = await fetch(`${address}/v1/agent/health`, { signal: AbortSignal.timeout(ANSWER_WITHIN_MS) });
  await res.text();
  return res.status;
}

test(`${CONNECTIONS} slowloris connections do not starve /v1/agent/health`, { timeout: 120_000 }, async () => {
  const limit = openFilesLimit();
  assert.ok(limit >= CONNECTIONS + 1024, `ulimit -n is ${limit}: ${CONNECTIONS} connections need more (raise it for this test)`);
  const a = agent!;
  for (let i = 0; i < CONNECTIONS; i += BATCH) {
    const batch = await Promise.all(Array.from({ length: Math.min(BATCH, CONNECTIONS - i) }, () => slowConnection(a.port)));
    sockets.push(...batch);
  }
  let line = 0;
  const trickle = setInterval(() => {
    line++;
    for (const s of sockets) if (!s.destroyed) s.write(`X-Slow-${line}: a\r\n`);
  }, 1000);
  try {
    for (let round = 0; round < 5; round++) {
      await sleep(1000);
      assert.equal(await health(a.address), 200, `round ${round}: /v1/agent/health`);
      const jobs = await api(a.address, 'GET', '/v1/jobs');
      assert.equal(jobs.status, 200, `round ${round}: /v1/jobs ${jobs.text}`);
    }
    const open = sockets.filter((s) => !s.destroyed).length;
    console.log(`slowloris: ${open} of ${CONNECTIONS} slow connections still open after ${line} header lines each`);
  } finally {
    clearInterval(trickle);
    for (const s of sockets) s.destroy();
  }
  await sleep(200);
  assert.equal(await health(a.address), 200, 'the agent answers once they are gone');
  assert.equal(a.proc.exitCode, null, 'the agent is still running');
});
