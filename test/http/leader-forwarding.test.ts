/**
 * Two real servers on one shared log, each behind its own HTTP API on a loopback port, with a
 * leadership the test switches: a follower forwards writes, clients' internal calls and
 * non-stale reads to the leader, answers `?stale` reads (blocking ones too) from its own state,
 * and shows the real cluster in the status, members and raft views.
 */
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import { createHttpServer } from '../../src/http/http-server.js';
import { Server } from '../../src/server/server.js';
import { SqliteLogBackend } from '../../src/server/log/sqlite-log-backend.js';
import type { Job, Node } from '../../src/structs/index.js';
import { mockJob, mockNode } from '../mock/factories.js';
import { fakeSchedulerFactory } from '../server/fake-scheduler.js';
import { LeadershipSwitch, laggingLog, type LaggingLog } from '../server/replication/test-cluster.js';
import { settled } from '../server/settled-server.js';

interface Member {
  server: Server;
  app: FastifyInstance;
  url: string;
  addr: string;
  log: LaggingLog;
}

async function call(base: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const res = await fetch(base + path, { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    // a plain-text error
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** A loopback address nothing listens on: a connection to it is refused. */
async function refusingAddress(): Promise<string> {
  const srv = createTcpServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return `127.0.0.1:${port}`;
}

/** A "leader" that reads a request, calls `onRequest`, then drops the connection unanswered. */
async function droppingLeader(onRequest: () => void): Promise<{ addr: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const sockets = new Set<Socket>();
  const srv: TcpServer = createTcpServer((sock) => {
    sockets.add(sock);
    let seen = '';
    sock.on('data', (d: Buffer) => {
      seen += d.toString('latin1');
      if (!seen.includes('\r\n\r\n')) return;
      seen = '';
      requests++;
      onRequest();
      sock.resetAndDestroy();
    });
    sock.on('error', () => undefined);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const addr = `127.0.0.1:${(srv.address() as { port: number }).port}`;
  return {
    addr,
    requests: () => requests,
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise<void>((r) => srv.close(() => r()));
    },
  };
}

/** How long a server without a leader holds a request here. */
const HOLD_MS = 1_000;

describe('a follower behind the HTTP API', () => {
  const shared = SqliteLogBackend.openInMemory();
  const sw = new LeadershipSwitch();
  const dir = mkdtempSync(join(tmpdir(), 'caravan-leader-fwd-'));
  let a: Member;
  let b: Member;

  async function member(name: 'a' | 'b'): Promise<Member> {
    const log = laggingLog(shared);
    const server = await Server.open({
      dataDir: join(dir, name),
      nodeName: name,
      numWorkers: 1,
      schedulerFactory: () => fakeSchedulerFactory,
      gcIntervalMs: 0,
      heartbeat: { minTtlMs: 3_600_000 },
      logBackend: log,
      leadership: sw.member(name, ''),
    });
    await settled(server);
    // A short hold (Nomad's is 5 s) keeps the leaderless refusals quick.
    const app = createHttpServer({ server, agent: { name, httpAddr: '127.0.0.1:0' }, leaderHoldMs: HOLD_MS });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const addr = `127.0.0.1:${port}`;
    server.advertise(addr);
    return { server, app, url: `http://${addr}`, addr, log };
  }

  before(async () => {
    sw.elect('a');
    a = await member('a');
    b = await member('b');
  });
  after(async () => {
    for (const m of [b, a]) {
      await m.app.close();
      await m.server.close();
    }
    await shared.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('forwards writes and reads to the leader; answers ?stale reads (blocking too) itself', async () => {
    // Something in the log first: a blocking query from index 0 would not block.
    await a.server.registerNode(mockNode());
    assert.equal(b.server.state.latestIndex(), a.server.state.latestIndex());
    // The follower lags: only the leader has what is written now.
    b.log.hold();
    const job: Job = mockJob({ ID: 'fwd-job' });
    const put = await call(b.url, 'PUT', '/v1/jobs', { Job: job });
    assert.equal(put.status, 200, put.text);
    const written = Number(put.headers.get('x-nomad-index'));
    assert.ok(a.server.state.jobById('default', 'fwd-job'), 'the leader applied the forwarded write');
    assert.equal(b.server.state.jobById('default', 'fwd-job'), undefined, 'the follower has not applied it yet');

    const read = await call(b.url, 'GET', '/v1/job/fwd-job');
    assert.equal(read.status, 200, 'a read without ?stale is the leader\'s answer');
    assert.equal(read.headers.get('x-nomad-knownleader'), 'true');
    const stale = await call(b.url, 'GET', '/v1/job/fwd-job?stale');
    assert.equal(stale.status, 404, 'a ?stale read is the follower\'s own answer');
    assert.equal(stale.headers.get('x-nomad-knownleader'), 'true');
    assert.match(stale.headers.get('x-nomad-lastcontact') ?? '', /^\d+$/);

    // A blocking ?stale query on the follower wakes when the follower applies the entry.
    const before = b.server.state.latestIndex();
    const blocking = call(b.url, 'GET', `/v1/jobs?stale&index=${before}&wait=20s`);
    await new Promise((r) => setTimeout(r, 200));
    b.log.release();
    const woke = await blocking;
    assert.equal(woke.status, 200, woke.text);
    assert.ok(Number(woke.headers.get('x-nomad-index')) >= written);
    assert.ok((woke.json as { ID: string }[]).some((j) => j.ID === 'fwd-job'));
  });

  it('forwards clients\' internal calls and tells clients every server', async () => {
    const node: Node = mockNode();
    const reg = await call(b.url, 'PUT', '/v1/internal/node/register', { Node: node }, { 'X-Nomad-Token': node.SecretID });
    assert.equal(reg.status, 200, reg.text);
    const servers = (reg.json as { Servers: { RPCAdvertiseAddr: string }[] }).Servers.map((s) => s.RPCAdvertiseAddr).sort();
    assert.deepEqual(servers, [a.addr, b.addr].sort());
    assert.equal(a.server.duties?.heartbeats.tracking(node.ID), true, 'the leader runs the node\'s heartbeat timer');
    const hb = await call(b.url, 'PUT', `/v1/internal/node/${node.ID}/heartbeat`, { Status: 'ready' }, { 'X-Nomad-Token': node.SecretID });
    assert.equal(hb.status, 200, hb.text);
    const forged = await call(b.url, 'PUT', `/v1/internal/node/${node.ID}/heartbeat`, { Status: 'down' }, { 'X-Nomad-Token': 'not-the-secret' });
    assert.equal(forged.status, 403, forged.text);
  });

  it('shows the real cluster: leader, peers, members and the raft configuration on every server', async () => {
    for (const m of [a, b]) {
      assert.equal((await call(m.url, 'GET', '/v1/status/leader')).json, a.addr);
      assert.deepEqual(((await call(m.url, 'GET', '/v1/status/peers')).json as string[]).sort(), [a.addr, b.addr].sort());
      const members = (await call(m.url, 'GET', '/v1/agent/members')).json as { Members: { Name: string; Addr: string; Port: number; Status: string; Tags: Record<string, string> }[] };
      assert.deepEqual(members.Members.map((x) => [x.Name, `${x.Addr}:${x.Port}`, x.Status, x.Tags['leader']]).sort(), [
        ['a.global', a.addr, 'alive', '1'],
        ['b.global', b.addr, 'alive', '0'],
      ]);
      const raft = (await call(m.url, 'GET', '/v1/operator/raft/configuration')).json as { Servers: { ID: string; Address: string; Leader: boolean; Voter: boolean }[] };
      assert.deepEqual(raft.Servers.map((s) => [s.ID, s.Address, s.Leader, s.Voter]).sort(), [
        ['a', a.addr, true, true],
        ['b', b.addr, false, true],
      ]);
    }
  });

  it('without a leader a follower refuses writes and non-stale reads with "No cluster leader" after the hold, and serves ?stale', async () => {
    sw.elect(null);
    try {
      const put = await call(b.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'leaderless' }) });
      // Nomad's structs.ErrNoLeader: a plain error, 500.
      assert.equal(put.status, 500, put.text);
      assert.equal(put.text, 'No cluster leader');
      const read = await call(b.url, 'GET', '/v1/jobs');
      assert.equal(read.status, 500);
      assert.equal(read.text, 'No cluster leader');
      assert.equal((await call(b.url, 'GET', '/v1/status/leader')).json, '', 'no leader named');
      // A read a follower forwarded before leadership went is not answered by the old leader.
      const forwarded = await call(a.url, 'GET', '/v1/jobs', undefined, { 'x-caravan-forwarded-to-leader': '1' });
      assert.equal(forwarded.status, 500);
      assert.equal(forwarded.text, 'No cluster leader');
      const stale = await call(b.url, 'GET', '/v1/jobs?stale');
      assert.equal(stale.status, 200);
      assert.equal(stale.headers.get('x-nomad-knownleader'), 'false');
      assert.equal(a.server.state.jobById('default', 'leaderless'), undefined);
    } finally {
      sw.elect('a');
    }
  });

  it('a write sent while no leader is known is held and answered by the leader elected meanwhile', async () => {
    sw.elect(null);
    try {
      const put = call(b.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'held-through-election' }) });
      // The election ends while the request is held (well inside the hold time).
      await new Promise((r) => setTimeout(r, HOLD_MS / 5));
      sw.elect('a');
      const answer = await put;
      assert.equal(answer.status, 200, answer.text);
      assert.ok(a.server.state.jobById('default', 'held-through-election'), 'written by the new leader');
    } finally {
      sw.elect('a');
    }
  });

  it('after leadership moves, the old leader forwards to the new one', async () => {
    sw.elect('b');
    try {
      const put = await call(a.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'after-move' }) });
      assert.equal(put.status, 200, put.text);
      assert.ok(b.server.state.jobById('default', 'after-move'));
      assert.equal((await call(a.url, 'GET', '/v1/status/leader')).json, b.addr);
    } finally {
      sw.elect('a');
    }
  });

  it('a write whose named leader refuses connections (dead, lease not lapsed) is held and answered by the next leader, or by this server once it leads', async () => {
    const dead = sw.member('dead', await refusingAddress());
    try {
      sw.elect('dead');
      const toA = call(b.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'after-dead-leader' }) });
      // b forwards to the dead address, is refused, and holds the write until the view moves.
      await new Promise((r) => setTimeout(r, HOLD_MS / 5));
      sw.elect('a');
      const answer = await toA;
      assert.equal(answer.status, 200, answer.text);
      assert.ok(a.server.state.jobById('default', 'after-dead-leader'), 'written by the next leader');

      sw.elect('dead');
      const toB = call(b.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'after-dead-leader-b' }) });
      await new Promise((r) => setTimeout(r, HOLD_MS / 5));
      sw.elect('b');
      const here = await toB;
      assert.equal(here.status, 200, here.text);
      assert.ok(b.server.state.jobById('default', 'after-dead-leader-b'), 'written by this server, now the leader');

      // A leader that stays named but dead: the 503 once the hold is over, as before.
      sw.elect('dead');
      const stuck = await call(b.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'never-written' }) });
      assert.equal(stuck.status, 503, stuck.text);
      assert.match(stuck.text, new RegExp(`the leader is ${dead.address}`));
    } finally {
      sw.elect('a');
    }
  });

  it('hostile: a body past the 16 MiB limit sent while the named leader is dead is refused 413, neither held nor replayed to the next leader', async () => {
    sw.member('dead-big', await refusingAddress());
    try {
      sw.elect('dead-big');
      // 17 MiB of job: past the body limit, which is also the most a follower keeps for a replay.
      const big = call(b.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'too-big-to-replay', Meta: { pad: 'x'.repeat(17 * 1024 * 1024) } }) });
      await new Promise((r) => setTimeout(r, HOLD_MS / 5));
      sw.elect('a');
      const answer = await big;
      assert.equal(answer.status, 413, answer.text);
      assert.equal(a.server.state.jobById('default', 'too-big-to-replay'), undefined, 'not replayed to the next leader');
      // The follower still serves.
      assert.equal((await call(b.url, 'GET', '/v1/jobs?stale')).status, 200);
    } finally {
      sw.elect('a');
    }
  });

  it('a forward that failed after the request reached the leader is not replayed, even to a new leader', async () => {
    // The leader reads the write, loses leadership to a, and dies without answering.
    const dropping = await droppingLeader(() => sw.elect('a'));
    sw.member('dropping', dropping.addr);
    try {
      sw.elect('dropping');
      const put = await call(b.url, 'PUT', '/v1/jobs', { Job: mockJob({ ID: 'maybe-applied' }) });
      assert.equal(put.status, 503, put.text);
      assert.equal(dropping.requests(), 1);
      assert.equal(a.server.state.jobById('default', 'maybe-applied'), undefined, 'not replayed to the next leader');
    } finally {
      sw.elect('a');
      await dropping.close();
    }
  });
});
