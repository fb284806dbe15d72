/**
 * The cross-namespace attempts a hostile review found held (issue 26, "Held"), kept as tests.
 * Real agents with ACLs on — a server and a client-only agent resolving tokens through it — run
 * a job of namespace team-b whose task holds a secret in its environment and prints a line to
 * its log, beside a variable of team-b. The attacker holds a `write` token on namespace team-a
 * (its own job runs there) and tries every way into team-b: jobs, allocations (also by their
 * 8-character prefix), fs, logs, stats, signal, restart, stop, gc, variables (`%2f` in the path,
 * a body namespace differing from the query), exec, search, `?namespace=*`, the event stream,
 * ACL and namespace writes, drain, scheduler configuration, snapshot, monitor, the internal
 * routes without the node secret, and path tricks (`%2e%2e`, `//`, upper case, method override
 * headers, two token headers). Each is refused (403, or a list without team-b's objects), no
 * answer carries team-b's secrets, and team-b's job, allocation, variable and namespace are as
 * they were at the end.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub, Allocation, Job } from '../../src/structs/index.js';
import type { Variable } from '../../src/structs/variable.js';
import { call, startAclCluster, type AclCluster, type Answer } from './helpers/acl-cluster.js';
import { execOnce, type ExecOnce } from '../integration/helpers/agent-process.js';
import { JsonFrameDecoder } from '../../src/http/json-frame-decoder.js';

const API_KEY = 'sk-team-b-secret';
const DB_PASSWORD = 'hunter2-team-b';
const LOG_LINE = 'victim-log-line';

const job = (id: string, namespace: string, script: string, env: Record<string, string> = {}) => `
job "${id}" {
  datacenters = ["dc1"]
  namespace   = "${namespace}"
  group "g" {
    task "t" {
      driver = "raw_exec"
      env {
${Object.entries(env).map(([k, v]) => `        ${k} = "${v}"`).join('\n')}
      }
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;

/** The attacker: everything in its own namespace, nothing elsewhere; `secret/*` denied to show path rules hold. */
const ATTACKER_POLICY = `
namespace "team-a" {
  policy       = "write"
  capabilities = ["alloc-node-exec"]
  variables {
    path "*" {
      capabilities = ["write", "read", "destroy", "list"]
    }
    path "secret/*" {
      capabilities = ["deny"]
    }
  }
}`;

/** An observer of team-b: reads, never writes (for the method-override and two-header attempts). */
const READER_POLICY = `
namespace "team-b" {
  policy = "read"
}`;

let c: AclCluster;
let attacker: AclToken;
let reader: AclToken;
let victim: AllocListStub;
let own: AllocListStub;
let victimEval: string;

/** Team-b's secrets, and identifiers that only a reader of team-b learns. */
const leaks = (): string[] => [API_KEY, DB_PASSWORD, LOG_LINE, victim.ID, victimEval];

/**
 * Asserts `a` is refused with one of `statuses` and carries nothing of team-b (but what the
 * request itself named, `asked`, which an error may quote back).
 */
function refused(what: string, a: Answer, statuses: number[] = [403], asked = ''): void {
  assert.ok(statuses.includes(a.status), `${what}: answered ${a.status} ${a.text.slice(0, 300)}`);
  for (const secret of leaks().filter((x) => !asked.includes(x))) assert.ok(!a.text.includes(secret), `${what}: the answer carries ${secret}`);
}

/** Asserts a list answer succeeded and carries nothing of team-b. */
function filtered(what: string, a: Answer): void {
  assert.ok(a.status === 200 || a.status === 403, `${what}: answered ${a.status} ${a.text.slice(0, 300)}`);
  for (const secret of [...leaks(), '"team-b"', 'payments']) assert.ok(!a.text.includes(secret), `${what}: the answer carries ${secret}`);
}

/**
 * A request sent exactly as written — path unnormalized, headers repeated — as an attacker's
 * raw client would (fetch would resolve `..` and merge headers first), on a socket of its own.
 */
function raw(address: string, method: string, path: string, headers: Array<[string, string]>, body?: string): Promise<Answer> {
  const url = new URL(address);
  return new Promise((resolve, reject) => {
    const lines = [`${method} ${path} HTTP/1.1`, `Host: ${url.host}`, 'Connection: close', ...headers.map(([k, v]) => `${k}: ${v}`)];
    if (body !== undefined) lines.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on('data', (d: Buffer) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const all = Buffer.concat(chunks).toString('utf8');
      const status = /^HTTP\/1\.1 (\d{3})/.exec(all);
      if (!status) return reject(new Error(`no HTTP answer to ${method} ${path}: ${all.slice(0, 200)}`));
      const head = all.slice(0, all.indexOf('\r\n\r\n'));
      let text = all.slice(head.length + 4);
      if (/^transfer-encoding:\s*chunked/im.test(head)) {
        let out = '';
        for (let rest = text; ; ) {
          const nl = rest.indexOf('\r\n');
          const size = parseInt(rest.slice(0, nl), 16);
          if (!(size > 0)) break;
          out += rest.slice(nl + 2, nl + 2 + size);
          rest = rest.slice(nl + 2 + size + 2);
        }
        text = out;
      }
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {
        // plain text
      }
      resolve({ status: Number(status[1]), body: parsed, text });
    });
    // Written, not ended: a half-closed socket makes Node's server drop a request still being answered.
    socket.write(`${lines.join('\r\n')}\r\n\r\n${body ?? ''}`);
  });
}

/** One exec over the websocket: stdout, and the close code and reason. */
function exec(address: string, allocId: string, headers: Record<string, string>, command: string[]): Promise<ExecOnce> {
  return execOnce(address, allocId, command, headers);
}

/** Everything the event stream sends a token from index 1 for `ms` (its status when refused). */
async function streamed(address: string, query: string, token: string, ms: number): Promise<Answer> {
  const ac = new AbortController();
  const res = await fetch(`${address}/v1/event/stream?index=1&${query}`, { headers: { 'X-Nomad-Token': token }, signal: ac.signal });
  const timer = setTimeout(() => ac.abort(), ms);
  let text = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) text += Buffer.from(chunk).toString('utf8');
  } catch {
    // aborted: done reading
  } finally {
    clearTimeout(timer);
  }
  return { status: res.status, body: text, text };
}

before(async () => {
  c = await startAclCluster();
  await c.namespace('team-a');
  await c.namespace('team-b');
  attacker = await c.token('attacker', ATTACKER_POLICY);
  reader = await c.token('reader', READER_POLICY);
  victim = await c.runJob('payments', 'team-b', job('payments', 'team-b', `echo ${LOG_LINE}; while true; do sleep 0.5; done`, { API_KEY }));
  own = await c.runJob('mine', 'team-a', job('mine', 'team-a', 'while true; do sleep 0.5; done'));
  victimEval = (await call<Allocation>(c.server.address, 'GET', `/v1/allocation/${victim.ID}`, c.mgmt)).body.EvalID;
  const v = await call(c.server.address, 'PUT', '/v1/var/nomad/jobs/payments?namespace=team-b', c.mgmt, { Namespace: 'team-b', Path: 'nomad/jobs/payments', Items: { db_password: DB_PASSWORD } });
  assert.equal(v.status, 200, v.text);
  const s = await call(c.server.address, 'PUT', '/v1/var/secret/db?namespace=team-a', c.mgmt, { Namespace: 'team-a', Path: 'secret/db', Items: { db_password: DB_PASSWORD } });
  assert.equal(s.status, 200, s.text);
});

after(async () => {
  await c?.close();
});

describe('with ACLs on, a team-a write token gets nothing of team-b', () => {
  const S = () => c.server.address;
  const A = () => attacker.SecretID;
  const prefix = () => victim.ID.slice(0, 8);

  it('jobs: read, list, register, deregister, evaluate, scale, plan, revert, dispatch', async () => {
    for (const sub of ['', '/allocations', '/evaluations', '/versions', '/summary', '/submission', '/deployments', '/scale']) {
      refused(`GET /v1/job/payments${sub}`, await call(S(), 'GET', `/v1/job/payments${sub}?namespace=team-b`, A()));
    }
    refused('GET /v1/jobs?namespace=team-b', await call(S(), 'GET', '/v1/jobs?namespace=team-b', A()));
    filtered('GET /v1/jobs?namespace=*', await call(S(), 'GET', '/v1/jobs?namespace=*', A()));
    filtered('GET /v1/jobs?namespace=team-a&namespace=team-b', await call(S(), 'GET', '/v1/jobs?namespace=team-a&namespace=team-b', A()));
    filtered('GET /v1/jobs/statuses?namespace=*', await call(S(), 'GET', '/v1/jobs/statuses?namespace=*', A()));
    const hijack = (ns: string) => ({ Job: { ID: 'payments', Name: 'payments', Namespace: ns, Type: 'service', Datacenters: ['dc1'], TaskGroups: [] } });
    refused('PUT /v1/jobs in team-b', await call(S(), 'PUT', '/v1/jobs', A(), hijack('team-b')));
    refused('PUT /v1/jobs?namespace=team-a with a team-b Job', await call(S(), 'PUT', '/v1/jobs?namespace=team-a', A(), hijack('team-b')));
    refused('PUT /v1/job/payments?namespace=team-a with a team-b Job', await call(S(), 'PUT', '/v1/job/payments?namespace=team-a', A(), hijack('team-b')));
    refused('POST /v1/job/payments/plan with a team-b Job', await call(S(), 'POST', '/v1/job/payments/plan?namespace=team-a', A(), hijack('team-b')));
    refused('POST /v1/validate/job with a team-b Job', await call(S(), 'POST', '/v1/validate/job', A(), hijack('team-b')));
    refused('DELETE /v1/job/payments?namespace=team-b', await call(S(), 'DELETE', '/v1/job/payments?namespace=team-b&purge=true', A()));
    for (const [sub, body] of [
      ['evaluate', {}],
      ['scale', { Count: 0, Target: { Group: 'g' } }],
      ['revert', { JobID: 'payments', JobVersion: 0 }],
      ['stable', { JobID: 'payments', JobVersion: 0, Stable: false }],
      ['dispatch', {}],
      ['periodic/force', {}],
    ] as const) {
      refused(`POST /v1/job/payments/${sub}`, await call(S(), 'POST', `/v1/job/payments/${sub}?namespace=team-b`, A(), body));
    }
  });

  it('allocations, evaluations and deployments, by ID and by 8-character prefix', async () => {
    refused('GET /v1/allocation/<id>', await call(S(), 'GET', `/v1/allocation/${victim.ID}`, A()));
    refused('GET /v1/allocation/<prefix>', await call(S(), 'GET', `/v1/allocation/${prefix()}`, A()), [403, 404]);
    refused('GET /v1/allocation/<id>/checks', await call(S(), 'GET', `/v1/allocation/${victim.ID}/checks`, A()));
    refused('POST /v1/allocation/<id>/stop', await call(S(), 'POST', `/v1/allocation/${victim.ID}/stop`, A()));
    refused('POST /v1/allocation/<prefix>/stop', await call(S(), 'POST', `/v1/allocation/${prefix()}/stop`, A()), [403, 404]);
    refused('GET /v1/allocations?namespace=team-b', await call(S(), 'GET', `/v1/allocations?namespace=team-b&prefix=${prefix()}`, A()));
    filtered('GET /v1/allocations?namespace=*&prefix=', await call(S(), 'GET', `/v1/allocations?namespace=*&prefix=${prefix()}`, A()));
    filtered('GET /v1/allocations?prefix=', await call(S(), 'GET', `/v1/allocations?prefix=${prefix()}`, A()));
    refused('GET /v1/evaluation/<id>', await call(S(), 'GET', `/v1/evaluation/${victimEval}`, A()));
    refused('GET /v1/evaluation/<id>/allocations', await call(S(), 'GET', `/v1/evaluation/${victimEval}/allocations`, A()));
    refused('GET /v1/evaluations?namespace=team-b', await call(S(), 'GET', '/v1/evaluations?namespace=team-b', A()));
    filtered('GET /v1/evaluations?namespace=*', await call(S(), 'GET', '/v1/evaluations?namespace=*', A()));
    refused('GET /v1/deployments?namespace=team-b', await call(S(), 'GET', '/v1/deployments?namespace=team-b', A()));
    filtered('GET /v1/deployments?namespace=*', await call(S(), 'GET', '/v1/deployments?namespace=*', A()));
  });

  it('the client routes — fs, logs, stats, signal, restart, gc, checks — on the server and on the client agent', async () => {
    for (const agent of [c.server, c.client]) {
      const at = agent === c.server ? 'server' : 'client';
      for (const id of [victim.ID, prefix()]) {
        const statuses = id === victim.ID ? [403] : [403, 404];
        for (const path of [
          `/v1/client/fs/ls/${id}?path=/`,
          `/v1/client/fs/stat/${id}?path=/alloc/logs/t.stdout.0`,
          `/v1/client/fs/cat/${id}?path=/alloc/logs/t.stdout.0`,
          `/v1/client/fs/readat/${id}?path=/alloc/logs/t.stdout.0&offset=0&limit=100`,
          `/v1/client/fs/stream/${id}?path=/alloc/logs/t.stdout.0&follow=false`,
          `/v1/client/fs/logs/${id}?task=t&type=stdout&plain=true&follow=false`,
          `/v1/client/allocation/${id}/stats`,
          `/v1/client/allocation/${id}/checks`,
          `/v1/client/allocation/${id}/gc`,
        ]) {
          refused(`${at} GET ${path}`, await call(agent.address, 'GET', path, A()), statuses);
        }
        refused(`${at} signal ${id}`, await call(agent.address, 'PUT', `/v1/client/allocation/${id}/signal`, A(), { Signal: 'SIGKILL', Task: 't' }), statuses);
        refused(`${at} restart ${id}`, await call(agent.address, 'PUT', `/v1/client/allocation/${id}/restart`, A(), { TaskName: 't' }), statuses);
      }
    }
  });

  it('exec into team-b, on either agent, by ID or prefix, is closed with "Permission denied" and runs nothing', async () => {
    for (const address of [c.server.address, c.client.address]) {
      for (const id of [victim.ID, prefix()]) {
        const r = await exec(address, id, { 'X-Nomad-Token': A() }, ['/bin/sh', '-c', 'echo ran-$API_KEY']);
        assert.equal(r.code, 1008, `${address} ${id}: ${r.code} ${r.reason}`);
        assert.match(r.reason, id === victim.ID ? /Permission denied/ : /Permission denied|Unknown allocation/);
        assert.equal(r.stdout, '');
      }
    }
    // Its own allocation: the token works, so the refusals above are about the namespace.
    const mine = await exec(c.server.address, own.ID, { 'X-Nomad-Token': A() }, ['/bin/echo', 'own-ok']);
    assert.equal(mine.stdout, 'own-ok\n');
  });

  it('variables of team-b: by path, with %2f, with a body namespace differing from the query', async () => {
    const path = 'nomad/jobs/payments';
    refused('GET team-b variable', await call(S(), 'GET', `/v1/var/${path}?namespace=team-b`, A()));
    refused('GET team-b variable, %2f', await call(S(), 'GET', `/v1/var/${encodeURIComponent(path)}?namespace=team-b`, A()));
    refused('GET team-b variable, %2F', await call(S(), 'GET', `/v1/var/nomad%2Fjobs%2Fpayments?namespace=team-b`, A()));
    filtered('GET /v1/vars?namespace=team-b', await call(S(), 'GET', '/v1/vars?namespace=team-b', A()));
    filtered('GET /v1/vars?namespace=*', await call(S(), 'GET', '/v1/vars?namespace=*', A()));
    const overwrite = (ns: string) => ({ Namespace: ns, Path: path, Items: { db_password: 'pwned' } });
    refused('PUT team-b variable', await call(S(), 'PUT', `/v1/var/${path}?namespace=team-b`, A(), overwrite('team-b')));
    refused('PUT ?namespace=team-a with a team-b body', await call(S(), 'PUT', `/v1/var/${path}?namespace=team-a`, A(), overwrite('team-b')));
    refused('PUT %2f ?namespace=team-a with a team-b body', await call(S(), 'PUT', `/v1/var/${encodeURIComponent(path)}?namespace=team-a`, A(), overwrite('team-b')));
    refused('DELETE team-b variable', await call(S(), 'DELETE', `/v1/var/${path}?namespace=team-b`, A()));
    // A body naming the attacker's own namespace on a read or delete of team-b's: the gate and
    // the handler must agree on one namespace.
    const ownBody = JSON.stringify({ Namespace: 'team-a' });
    refused('DELETE ?namespace=team-b with a team-a body', await raw(S(), 'DELETE', `/v1/var/${path}?namespace=team-b`, [['X-Nomad-Token', A()]], ownBody), [403]);
    refused('GET ?namespace=team-b with a team-a body', await raw(S(), 'GET', `/v1/var/${path}?namespace=team-b`, [['X-Nomad-Token', A()]], ownBody), [403]);
    refused('lock-acquire team-b variable', await call(S(), 'PUT', `/v1/var/${path}?namespace=team-b&lock-acquire`, A(), { Namespace: 'team-b', Path: path, Lock: { TTL: '10s' } }));
    // The internal route a client reads variables for its tasks through wants the node's secret.
    const internal = await call(S(), 'PUT', '/v1/internal/task/variables', A(), { AllocID: own.ID, Task: 't', Reads: [{ Op: 'get', Namespace: 'team-b', Path: path }] });
    refused('internal task variables with a user token', internal);
    const noToken = await call(S(), 'PUT', '/v1/internal/task/variables', undefined, { AllocID: victim.ID, Task: 't', Reads: [{ Op: 'get', Path: path }] });
    refused('internal task variables without a token', noToken);
  });

  it('variables: in its own namespace, a denied path stays denied however it is spelled', async () => {
    for (const spelled of ['secret/db', 'secret%2fdb', '%2fsecret%2fdb', '/secret/db', 'secret/db/', '%2Fsecret/db%2F']) {
      refused(`GET team-a ${spelled}`, await raw(S(), 'GET', `/v1/var/${spelled}?namespace=team-a`, [['X-Nomad-Token', A()]]), [403]);
      refused(`DELETE team-a ${spelled}`, await raw(S(), 'DELETE', `/v1/var/${spelled}?namespace=team-a`, [['X-Nomad-Token', A()]]), [403]);
    }
  });

  it('search, prefix and fuzzy, in team-b and in every namespace', async () => {
    for (const [route, body] of [
      ['/v1/search', { Prefix: prefix(), Context: 'allocs' }],
      ['/v1/search', { Prefix: 'pay', Context: 'all' }],
      ['/v1/search', { Prefix: '', Context: 'all' }],
      ['/v1/search/fuzzy', { Text: 'pay', Context: 'all' }],
      ['/v1/search/fuzzy', { Text: prefix(), Context: 'allocs' }],
    ] as const) {
      for (const q of ['?namespace=team-b', '?namespace=*', '']) {
        filtered(`${route}${q} ${JSON.stringify(body)}`, await call(S(), 'POST', `${route}${q}`, A(), body));
      }
      filtered(`${route} with Namespace team-b in the body`, await call(S(), 'POST', route, A(), { ...body, Namespace: 'team-b' }));
    }
  });

  it('the event stream, of team-b and of every namespace, carries none of team-b', async () => {
    for (const q of ['namespace=team-b', 'namespace=*', 'namespace=*&topic=Allocation:*&topic=Job:payments', 'namespace=team-b&topic=Variables:*']) {
      const r = await streamed(S(), q, A(), 1200);
      filtered(`event stream ${q}`, r);
      // Frames back to back, as Nomad's; a frame cut by the end of the read is left out.
      for (const text of new JsonFrameDecoder().push(r.text)) {
        const frame = JSON.parse(text) as { Events?: Array<{ Namespace: string }> };
        for (const e of frame.Events ?? []) assert.notEqual(e.Namespace, 'team-b', `event stream ${q}: ${text.slice(0, 200)}`);
      }
    }
  });

  it('ACL, namespace, node, operator and agent writes and reads need more than a namespace token', async () => {
    const attempts: Array<[string, string, unknown?]> = [
      ['PUT', '/v1/acl/policy/pwn', { Name: 'pwn', Rules: 'namespace "*" { policy = "write" }' }],
      ['DELETE', '/v1/acl/policy/reader'],
      ['PUT', '/v1/acl/token', { Name: 'pwn', Type: 'management' }],
      ['PUT', `/v1/acl/token/${attacker.AccessorID}`, { AccessorID: attacker.AccessorID, Name: 'attacker', Type: 'management' }],
      ['GET', '/v1/acl/tokens'],
      ['GET', `/v1/acl/token/${reader.AccessorID}`],
      ['PUT', '/v1/acl/role', { Name: 'pwn', Policies: [{ Name: 'reader' }] }],
      ['PUT', '/v1/namespace/team-b', { Name: 'team-b', Description: 'pwned' }],
      ['PUT', '/v1/namespace', { Name: 'team-c' }],
      ['DELETE', '/v1/namespace/team-b'],
      ['GET', `/v1/node/${c.node.ID}`],
      ['GET', `/v1/node/${c.node.ID}/allocations`],
      ['POST', `/v1/node/${c.node.ID}/drain`, { DrainSpec: { Deadline: 0 } }],
      ['POST', `/v1/node/${c.node.ID}/eligibility`, { Eligibility: 'ineligible' }],
      ['POST', `/v1/node/${c.node.ID}/purge`],
      ['GET', '/v1/operator/scheduler/configuration'],
      ['PUT', '/v1/operator/scheduler/configuration', { SchedulerAlgorithm: 'spread', PreemptionConfig: {} }],
      ['GET', '/v1/operator/snapshot'],
      ['PUT', '/v1/operator/snapshot', 'not a snapshot'],
      ['GET', '/v1/operator/raft/configuration'],
      ['PUT', '/v1/system/gc'],
      ['DELETE', '/v1/evaluations', { EvalIDs: [victimEval] }],
      ['GET', '/v1/agent/self'],
      ['GET', '/v1/agent/monitor?log_level=debug'],
      ['GET', '/v1/agent/host'],
      ['PUT', '/v1/agent/servers?address=127.0.0.1:1'],
      ['GET', '/v1/client/gc'],
      ['PUT', '/v1/client/metadata', { Meta: { pwned: 'yes' } }],
      ['GET', '/v1/client/stats'],
    ];
    for (const agent of [c.server, c.client]) {
      for (const [method, path, body] of attempts) {
        // The client-only agent forwards server routes; the refusal must hold either way.
        refused(`${agent === c.server ? 'server' : 'client'} ${method} ${path}`, await call(agent.address, method, path, A(), body));
      }
    }
    const boot = await call(S(), 'PUT', '/v1/acl/bootstrap', A());
    refused('a second bootstrap', boot, [400, 403]);
  });

  it('the internal client routes without the node secret', async () => {
    const allocUpdate = { Allocs: [{ ID: victim.ID, NodeID: c.node.ID, ClientStatus: 'failed', TaskStates: {} }] };
    for (const token of [undefined, A(), c.node.ID]) {
      refused('allocs update', await call(S(), 'PUT', '/v1/internal/allocs/update', token, allocUpdate));
      refused('heartbeat', await call(S(), 'PUT', `/v1/internal/node/${c.node.ID}/heartbeat`, token, { Status: 'down' }));
      refused('node allocations', await call(S(), 'GET', `/v1/node/${c.node.ID}/allocations`, token));
    }
  });

  it('path tricks: %2e%2e, //, upper case, method override headers, two token headers', async () => {
    const h = (): Array<[string, string]> => [['X-Nomad-Token', A()]];
    const notOk = [400, 403, 404, 405];
    for (const path of [
      `/v1/job/mine/../../job/payments?namespace=team-b`,
      `/v1/job/mine/%2e%2e/%2e%2e/job/payments?namespace=team-b`,
      `/v1/job/mine%2f..%2f..%2fjob%2fpayments?namespace=team-b`,
      `/v1/client/allocation/${own.ID}/../${victim.ID}/stats`,
      `/v1/client/allocation/${own.ID}/%2e%2e/${victim.ID}/stats`,
      `/v1/client/fs/cat/${own.ID}/%2e%2e/${victim.ID}?path=/alloc/logs/t.stdout.0`,
      `/v1/client/fs/cat/${own.ID}%2f..%2f${victim.ID}?path=/alloc/logs/t.stdout.0`,
      `/v1/allocation/${own.ID}/../${victim.ID}`,
      `//v1/job/payments?namespace=team-b`,
      `/v1//job/payments?namespace=team-b`,
      `//v1/allocation/${victim.ID}`,
      `/v1/client/fs//logs/${victim.ID}?task=t&type=stdout&plain=true&follow=false`,
      `/V1/JOB/payments?namespace=team-b`,
      `/v1/Job/payments?namespace=team-b`,
      `/v1/job/payments?namespace=TEAM-B`,
      `/v1/job/payments?Namespace=team-b`,
      `/v1/ALLOCATION/${victim.ID}`,
      `/v1/allocation/${victim.ID.toUpperCase()}`,
      `/v1/var/nomad/jobs/payments?namespace=Team-B`,
    ]) {
      for (const agent of [c.server, c.client]) refused(`GET ${path}`, await raw(agent.address, 'GET', path, h()), notOk, path);
    }
    // Method override: a reader of team-b may GET the job; no header or parameter makes that a write.
    const R = reader.SecretID;
    for (const [header, method] of [['X-HTTP-Method-Override', 'DELETE'], ['X-HTTP-Method', 'DELETE'], ['X-Method-Override', 'DELETE'], ['X-HTTP-Method-Override', 'PUT']] as const) {
      for (const m of ['GET', 'POST']) {
        const r = await raw(S(), m, `/v1/job/payments?namespace=team-b&purge=true&_method=${method}`, [['X-Nomad-Token', R], [header, method]], m === 'POST' ? '{}' : undefined);
        assert.ok(r.status === 200 ? m === 'GET' : notOk.includes(r.status), `${m} with ${header}: ${method}: ${r.status} ${r.text.slice(0, 200)}`);
      }
    }
    // Two token headers: neither the union of two tokens nor the other header's token is used.
    const del = `/v1/job/payments?namespace=team-b&purge=true`;
    for (const headers of [
      [['X-Nomad-Token', R], ['Authorization', `Bearer ${A()}`]],
      [['X-Nomad-Token', A()], ['Authorization', `Bearer ${R}`]],
      [['X-Nomad-Token', A()], ['X-Nomad-Token', R]],
      [['X-Nomad-Token', R], ['X-Nomad-Token', A()]],
      [['Authorization', `Bearer ${A()}`], ['Authorization', `Bearer ${R}`]],
      [['X-Nomad-Token', ''], ['Authorization', `Bearer ${R}`]],
    ] as Array<Array<[string, string]>>) {
      for (const agent of [c.server, c.client]) {
        refused(`DELETE with ${headers.map(([k]) => k).join(' + ')}`, await raw(agent.address, 'DELETE', del, headers), [400, 403]);
        refused(`signal with ${headers.map(([k]) => k).join(' + ')}`, await raw(agent.address, 'PUT', `/v1/client/allocation/${victim.ID}/signal`, headers, JSON.stringify({ Signal: 'SIGKILL', Task: 't' })), [400, 403]);
      }
    }
    for (const headers of [{ 'X-Nomad-Token': R, Authorization: `Bearer ${A()}` }, { 'X-Nomad-Token': A(), Authorization: `Bearer ${R}` }]) {
      for (const address of [c.server.address, c.client.address]) {
        const r = await exec(address, victim.ID, headers, ['/bin/sh', '-c', 'echo ran-$API_KEY']);
        assert.equal(r.code, 1008, `exec with two token headers: ${r.code} ${r.reason}`);
        assert.equal(r.stdout, '');
      }
    }
  });

  it('after all of it, team-b is as it was', async () => {
    const m = c.mgmt;
    const j = await call<Job>(S(), 'GET', '/v1/job/payments?namespace=team-b', m);
    assert.equal(j.status, 200, j.text);
    assert.equal(j.body.Stop, false);
    assert.equal(j.body.Version, 0, 'the job was never re-registered');
    assert.equal(j.body.TaskGroups[0]!.Count, 1);
    const a = await call<Allocation>(S(), 'GET', `/v1/allocation/${victim.ID}`, m);
    assert.equal(a.body.ClientStatus, 'running');
    assert.equal(a.body.DesiredStatus, 'run');
    assert.equal(a.body.TaskStates?.['t']?.Restarts ?? 0, 0, 'the task was neither restarted nor killed');
    const v = await call<Variable>(S(), 'GET', '/v1/var/nomad/jobs/payments?namespace=team-b', m);
    assert.equal(v.status, 200, v.text);
    assert.deepEqual(v.body.Items, { db_password: DB_PASSWORD });
    const own = await call<Variable>(S(), 'GET', '/v1/var/secret/db?namespace=team-a', m);
    assert.equal(own.status, 200, 'the denied path in team-a was not deleted');
    const ns = await call<{ Description: string }>(S(), 'GET', '/v1/namespace/team-b', m);
    assert.equal(ns.body.Description, '');
    assert.equal((await call(S(), 'GET', '/v1/namespace/team-c', m)).status, 404);
    const policies = await call<Array<{ Name: string }>>(S(), 'GET', '/v1/acl/policies', m);
    assert.deepEqual(policies.body.map((p) => p.Name).sort(), ['attacker', 'reader']);
    const self = await call<AclToken>(S(), 'GET', '/v1/acl/token/self', attacker.SecretID);
    assert.equal(self.body.Type, 'client');
    const node = await call<{ SchedulingEligibility: string; DrainStrategy: unknown }>(S(), 'GET', `/v1/node/${c.node.ID}`, m);
    assert.equal(node.body.SchedulingEligibility, 'eligible');
    assert.equal(node.body.DrainStrategy, null);
    const sched = await call<{ SchedulerConfig: { SchedulerAlgorithm: string } }>(S(), 'GET', '/v1/operator/scheduler/configuration', m);
    assert.equal(sched.body.SchedulerConfig.SchedulerAlgorithm, 'binpack');
    const evals = await call(S(), 'GET', `/v1/evaluation/${victimEval}`, m);
    assert.equal(evals.status, 200, 'the evaluation was not deleted');
  });
});
