/**
 * The agent's HTTP listener asks the kernel for the largest accept queue it allows
 * (net.core.somaxconn), as a Go listener — Nomad's — does, not Node's default of 511: 10,000
 * clients connecting at once (a cluster's clients after a server restart, the node simulator)
 * must not have their handshakes dropped while the server's event loop is busy, or a
 * heartbeat's new connection waits out SYN retransmits (1 s, 3 s, 7 s…) and the node is marked
 * down.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { startAgent } from './helpers/agent-process.js';

/** Connections opened while the agent is stopped: more than Node's default backlog of 511. */
const CONNECTIONS = 1_000;

test('an agent whose event loop is stalled still completes the handshakes of 1,000 connecting clients', async (t) => {
  const somaxconn = Number(readFileSync('/proc/sys/net/core/somaxconn', 'utf8').trim());
  assert.ok(somaxconn > CONNECTIONS, `this test needs net.core.somaxconn above ${CONNECTIONS} (it is ${somaxconn})`);
  const agent = await startAgent({ roleArgs: ['-server'], rawExec: false });
  const sockets: Socket[] = [];
  t.after(async () => {
    for (const s of sockets) s.destroy();
    agent.proc.kill('SIGCONT');
    await agent.stop();
    await agent.cleanup();
  });
  // Stopped, the agent accepts nothing: every completed handshake waits in its accept queue.
  agent.proc.kill('SIGSTOP');
  let connected = 0;
  for (let i = 0; i < CONNECTIONS; i++) {
    const s = connect({ host: '127.0.0.1', port: agent.port });
    s.on('connect', () => connected++).on('error', () => undefined);
    sockets.push(s);
  }
  // Handshakes inside the queue complete at once; those past it are dropped and wait for a SYN
  // retransmit that the still-full queue drops again. Wait until the count stops moving.
  for (let last = -1; connected !== last; ) {
    last = connected;
    await new Promise((resolve) => setTimeout(resolve, 1_500));
  }
  assert.equal(connected, CONNECTIONS, `only ${connected} of ${CONNECTIONS} handshakes completed while the agent was busy (its listen backlog is too short)`);
});
