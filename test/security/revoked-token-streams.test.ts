/**
 * Hostile: keep using a token after it was deleted, expired, or lost its capability, on
 * connections opened while it was valid. Real agents with ACLs on — a server and a client-only
 * agent that resolves tokens through it and caches them for Nomad's default 30 s — and a raw_exec
 * task that prints a line every half second. Each connection must be ended within a generous
 * deadline (the promise is a second; nothing here measures it): exec sessions through the server
 * (forwarded to the client) and on the client, event streams (with Nomad's error frame) through
 * either agent, log follows, file streams, the agent monitor and blocking queries (403). The
 * command typed into an exec session after its token was deleted is never run. A management
 * stream opened alongside is left alone.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { get as httpGet, type IncomingMessage } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import WebSocket from 'ws';
import type { AllocListStub, Node } from '../../src/structs/index.js';
import type { AclToken } from '../../src/structs/acl.js';
import { runCli, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { waitFor } from '../integration/helpers/client-agent.js';
import { killDataDirProcesses } from '../integration/helpers/processes.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

/** How long a revoked connection may take to end before the test fails (the promise is 1 s). */
const DEADLINE_MS = 10_000;

const JOB = `
job "ticker" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo tick; sleep 0.5; done"]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}`;

/** Everything a stream-holding token is given in "default", and agent:read for the monitor. */
const STREAMS_POLICY = `
namespace "default" {
  capabilities = ["alloc-exec", "alloc-node-exec", "read-job", "read-logs", "read-fs"]
}
agent {
  policy = "read"
}`;

async function call<T = unknown>(address: string, method: string, path: string, token?: string, body?: unknown): Promise<{ status: number; body: T; text: string; index: number }> {
  const res = await fetch(`${address}${path}`, { method, headers: token ? { 'X-Nomad-Token': token } : {}, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // plain-text answer
  }
  return { status: res.status, body: parsed as T, text, index: Number(res.headers.get('x-nomad-index') ?? 0) };
}

/** Resolves `p`, or rejects naming `what` once the deadline passes. */
function within<T>(what: string, p: Promise<T>, ms = DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: still open after ${ms} ms`)), ms);
  });
  return Promise.race([p, deadline]).finally(() => clearTimeout(timer));
}

/** An interactive shell in the task over the exec websocket. */
interface ShellSession {
  output(): string;
  type(text: string): void;
  closed: Promise<{ code: number; reason: string }>;
  isOpen(): boolean;
  terminate(): void;
}

async function openShell(address: string, allocId: string, token: string): Promise<ShellSession> {
  const q = new URLSearchParams({ task: 't', command: JSON.stringify(['/bin/sh']), tty: 'false' });
  const ws = new WebSocket(`${address.replace(/^http/, 'ws')}/v1/client/allocation/${allocId}/exec?${q}`, { headers: { 'X-Nomad-Token': token } });
  let out = '';
  ws.on('message', (d) => {
    const f = JSON.parse(String(d)) as { stdout?: { data?: string }; stderr?: { data?: string } };
    for (const s of [f.stdout, f.stderr]) if (s?.data) out += Buffer.from(s.data, 'base64').toString('utf8');
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: String(reason) })));
  ws.on('error', () => { /* 'close' follows */ });
  await within('exec open', new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    void closed.then((c) => reject(new Error(`exec closed before opening: ${c.code} ${c.reason}`)));
  }));
  return {
    output: () => out,
    type: (text) => ws.send(JSON.stringify({ stdin: { data: Buffer.from(text).toString('base64') } })),
    closed,
    isOpen: () => ws.readyState === WebSocket.OPEN,
    terminate: () => ws.terminate(),
  };
}

/** A long-lived GET: its body as it comes, and when it ends (cleanly or cut). */
interface OpenStream {
  status: number;
  text(): string;
  ended: Promise<void>;
  hasEnded(): boolean;
  close(): void;
}

function openStream(address: string, path: string, token: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = httpGet(`${address}${path}`, { headers: { 'X-Nomad-Token': token } }, (res: IncomingMessage) => {
      let body = '';
      let done = false;
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      const ended = new Promise<void>((r) => {
        const end = (): void => {
          done = true;
          r();
        };
        res.once('end', end);
        res.once('close', end);
        res.once('error', end);
      });
      resolve({ status: res.statusCode ?? 0, text: () => body, ended, hasEnded: () => done, close: () => req.destroy() });
    });
    req.on('error', (err) => reject(err));
  });
}

/** The last frame of an event stream's body. */
function lastFrame(body: string): unknown {
  return JSON.parse(new JsonFrameDecoder().push(body).at(-1)!);
}

test('a deleted, expired or narrowed token ends the connections opened with it', async () => {
  const tmp = await mkdtemp('/tmp/cv-revoke-');
  let server: AgentProcess | undefined;
  let client: AgentProcess | undefined;
  const cleanups: (() => void)[] = [];
  try {
    // token_ttl is Nomad's default: the client's cache must not keep a deleted token alive.
    const aclConfig = join(tmp, 'acl.hcl');
    await writeFile(aclConfig, 'acl {\n  enabled   = true\n  token_ttl = "30s"\n}\n');
    server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), extraArgs: ['-config', aclConfig] });
    client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c'), extraArgs: ['-config', aclConfig] });
    const s = server.address;
    const c = client.address;
    const boot = await runCli(s, ['acl', 'bootstrap', '-json']);
    assert.equal(boot.code, 0, boot.stderr);
    const mgmt = (JSON.parse(boot.stdout) as AclToken).SecretID;

    const putPolicy = async (name: string, rules: string) => assert.equal((await call(s, 'POST', `/v1/acl/policy/${name}`, mgmt, { Name: name, Rules: rules })).status, 200);
    const newToken = async (name: string, policy: string) => {
      const r = await call<AclToken>(s, 'POST', '/v1/acl/token', mgmt, { Name: name, Type: 'client', Policies: [policy] });
      assert.equal(r.status, 200, r.text);
      return r.body;
    };
    const deleteToken = async (t: AclToken) => assert.equal((await call(s, 'DELETE', `/v1/acl/token/${t.AccessorID}`, mgmt)).status, 200);
    await putPolicy('streams', STREAMS_POLICY);

    await waitFor('the client node ready', async () => (await call<Node[]>(s, 'GET', '/v1/nodes', mgmt)).body.find?.((n) => n.Status === 'ready'));
    const jobFile = join(tmp, 'ticker.hcl');
    await writeFile(jobFile, JOB);
    const run = await runCli(s, ['job', 'run', '-detach', '-token', mgmt, jobFile]);
    assert.equal(run.code, 0, run.stderr);
    const alloc = await waitFor('ticker running', async () => (await call<AllocListStub[]>(s, 'GET', '/v1/job/ticker/allocations', mgmt)).body.find?.((a) => a.ClientStatus === 'running'), 30_000);

    // A management event stream stays open through everything below.
    const bystander = await openStream(s, '/v1/event/stream?index=1', mgmt);
    cleanups.push(() => bystander.close());

    // 1. Exec through the server, forwarded to the client: after the delete, the next command is not run.
    {
      const token = await newToken('exec-via-server', 'streams');
      const shell = await openShell(s, alloc.ID, token.SecretID);
      cleanups.push(() => shell.terminate());
      shell.type('echo before-$((40+2))\n');
      await waitFor('the shell answering', async () => shell.output().includes('before-42') || undefined, DEADLINE_MS);
      await deleteToken(token);
      const marker = join(tmp, 'typed-after-delete');
      shell.type(`touch ${marker}\n`);
      const closed = await within('exec through the server after its token was deleted', shell.closed);
      assert.equal(closed.code, 1008);
      assert.match(closed.reason, /ACL token not found/);
      // One more round trip through the task proves the typed command did not run late either.
      const check = await openShell(s, alloc.ID, mgmt);
      cleanups.push(() => check.terminate());
      check.type(`test -e ${marker} && echo marker-present || echo marker-absent\n`);
      await waitFor('the check answering', async () => /marker-(present|absent)/.exec(check.output())?.[0], DEADLINE_MS);
      assert.match(check.output(), /marker-absent/);
      assert.equal(existsSync(marker), false);
      check.terminate();
    }

    // 2. Exec on the client agent itself, which learns of the delete from its server.
    {
      const token = await newToken('exec-on-client', 'streams');
      const shell = await openShell(c, alloc.ID, token.SecretID);
      cleanups.push(() => shell.terminate());
      shell.type('echo before-$((40+3))\n');
      await waitFor('the shell answering', async () => shell.output().includes('before-43') || undefined, DEADLINE_MS);
      await deleteToken(token);
      const closed = await within('exec on the client after its token was deleted', shell.closed);
      assert.equal(closed.code, 1008);
      assert.match(closed.reason, /ACL token not found/);
    }

    // 3. Every other kind of stream held by one token, through both agents, ends with its delete.
    {
      const token = await newToken('many-streams', 'streams');
      const t = token.SecretID;
      const logs = `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&follow=true&origin=start&offset=0`;
      const opened = {
        'event stream (server)': await openStream(s, '/v1/event/stream?index=1', t),
        'event stream (client)': await openStream(c, '/v1/event/stream?index=1', t),
        'log follow (server)': await openStream(s, `${logs}&plain=true`, t),
        'log follow (client)': await openStream(c, logs, t),
        'fs stream (server)': await openStream(s, `/v1/client/fs/stream/${alloc.ID}?path=alloc/logs/t.stdout.0&offset=0&origin=start`, t),
        'fs stream (client)': await openStream(c, `/v1/client/fs/stream/${alloc.ID}?path=alloc/logs/t.stdout.0&offset=0&origin=start`, t),
        'monitor (server)': await openStream(s, '/v1/agent/monitor?log_level=debug', t),
        'monitor (client)': await openStream(c, '/v1/agent/monitor?log_level=debug', t),
      };
      for (const [name, st] of Object.entries(opened)) {
        cleanups.push(() => st.close());
        assert.equal(st.status, 200, `${name}: ${st.text()}`);
      }
      await waitFor('the log follow delivering', async () => opened['log follow (server)'].text().includes('tick') || undefined, DEADLINE_MS);
      const jobs = await call(s, 'GET', '/v1/jobs', t);
      const blocked = {
        'blocking query (server)': call(s, 'GET', `/v1/jobs?index=${jobs.index}&wait=5m`, t),
        'blocking query (client)': call(c, 'GET', `/v1/jobs?index=${jobs.index}&wait=5m`, t),
      };
      // Let the blocking queries reach their servers and block (if they do not, they are refused all the same).
      await new Promise((r) => setTimeout(r, 300));
      await deleteToken(token);
      for (const [name, st] of Object.entries(opened)) await within(name, st.ended);
      for (const name of ['event stream (server)', 'event stream (client)'] as const) {
        assert.deepEqual(lastFrame(opened[name].text()), { Error: 'subscription closed by server, client should resubscribe' }, name);
      }
      for (const [name, p] of Object.entries(blocked)) {
        const r = await within(name, p);
        assert.equal(r.status, 403, `${name}: ${r.text}`);
      }
    }

    // 4. A token with a short TTL (Caravan has no minimum; Nomad's is token_min_expiration_ttl):
    //    its event stream ends with Nomad's expiry error, and its log follow on the client too.
    {
      // Short, yet long enough to open both streams on a loaded machine.
      const ttlMs = 5000;
      const created = await call<AclToken>(s, 'POST', '/v1/acl/token', mgmt, { Name: 'short', Type: 'client', Policies: ['streams'], ExpirationTTL: ttlMs * 1e6 });
      assert.equal(created.status, 200, created.text);
      const token = created.body;
      assert.notEqual(token.ExpirationTime, null);
      const events = await openStream(s, '/v1/event/stream?index=1', token.SecretID);
      const logs = await openStream(c, `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&follow=true&origin=end&offset=0`, token.SecretID);
      cleanups.push(() => events.close(), () => logs.close());
      assert.equal(events.status, 200, events.text());
      assert.equal(logs.status, 200, logs.text());
      await within('event stream after its token expired', events.ended, ttlMs + DEADLINE_MS);
      assert.deepEqual(lastFrame(events.text()), { Error: 'ACL token expired' });
      await within('log follow after its token expired', logs.ended);
    }

    // 5. Policies narrowed under open connections: an event stream that can read nothing more, an exec without alloc-exec.
    {
      await putPolicy('narrowed', STREAMS_POLICY);
      const token = await newToken('narrowed', 'narrowed');
      const events = await openStream(s, '/v1/event/stream?index=1&namespace=default', token.SecretID);
      cleanups.push(() => events.close());
      const shell = await openShell(c, alloc.ID, token.SecretID);
      cleanups.push(() => shell.terminate());
      await putPolicy('narrowed', 'namespace "other" {\n  policy = "read"\n}\n');
      await within('event stream after its policy was narrowed', events.ended);
      assert.deepEqual(lastFrame(events.text()), { Error: 'subscription closed by server, client should resubscribe' });
      const closed = await within('exec on the client after its policy was narrowed', shell.closed);
      assert.equal(closed.code, 1008);
      assert.match(closed.reason, /Permission denied/);
    }

    assert.equal(bystander.hasEnded(), false, 'the management stream is left alone');
  } finally {
    for (const f of cleanups) f();
    await client?.stop();
    await server?.stop();
    for (const dir of [join(tmp, 'c'), join(tmp, 's')]) await killDataDirProcesses(dir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  }
});
