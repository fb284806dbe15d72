/**
 * Client introduction through a real Server (FakeClock): tokens minted by the server admit a
 * new node under "strict" until they expire; a missing, expired, forged or mismatched token is
 * refused (403 NODE_INTRODUCTION_REFUSED) and registers nothing; a registered node re-registers
 * with its SecretID alone; a registration naming a known node with another secret is refused
 * under every enforcement; the signing key is replicated state (a token outlives a restart).
 */
import { afterEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Server, type ServerConfig } from '../../src/server/server.js';
import { ServerError } from '../../src/server/server-error.js';
import type { ClientIntroductionConfig, IntroductionEnforcement } from '../../src/structs/client-introduction.js';
import { FakeClock } from '../../src/time/clock.js';
import { INTRODUCTION_LOG_BURST } from '../../src/server/introduction/introduction-log.js';
import { mockNode } from '../mock/factories.js';
import { fakeSchedulerFactory } from './fake-scheduler.js';

const dirs: string[] = [];
const open: Server[] = [];

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'caravan-intro-'));
  dirs.push(d);
  return d;
}

async function start(enforcement: IntroductionEnforcement, over: Partial<ServerConfig> = {}): Promise<Server> {
  const intro: ClientIntroductionConfig = { enforcement, defaultIdentityTtlMs: 5 * 60_000, maxIdentityTtlMs: 30 * 60_000 };
  const s = await Server.open({ dataDir: over.dataDir ?? tempDir(), numWorkers: 1, schedulerFactory: () => fakeSchedulerFactory, clientIntroduction: intro, heartbeat: { minTtlMs: 3_600_000 }, ...over });
  open.push(s);
  return s;
}

afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const refused = (reason: RegExp) => (e: unknown) =>
  e instanceof ServerError && e.code === 'NODE_INTRODUCTION_REFUSED' && e.status === 403 && /^Permission denied: node registration refused: /.test(e.message) && reason.test(e.message);
const secretMismatch = (e: unknown) => e instanceof ServerError && e.code === 'NODE_SECRET_MISMATCH' && e.status === 403;

describe('client introduction on the server', () => {
  it('strict: a minted token admits a new node; none, expired or forged tokens admit nothing', async () => {
    const clock = new FakeClock();
    const s = await start('strict', { clock });
    const n = mockNode({ Name: 'web-1' });
    await assert.rejects(s.registerNode(n), refused(/no introduction token \(client_introduction enforcement is "strict"\)/));
    await assert.rejects(s.registerNode(n, { introToken: 'not-a-jwt' }), refused(/introduction token is malformed/));
    assert.equal(s.state.nodeById(n.ID), undefined, 'nothing was registered');

    const { JWT } = await s.clientIntroduction.createToken({ NodeName: 'web-1', TTL: '10m' });
    // A token changed in any byte is refused.
    const forged = `${JWT.slice(0, -3)}${JWT.endsWith('AAA') ? 'BBB' : 'AAA'}`;
    await assert.rejects(s.registerNode(n, { introToken: forged }), refused(/invalid signature/));
    // Bound to its name and to the default pool.
    await assert.rejects(s.registerNode(mockNode({ Name: 'web-2' }), { introToken: JWT }), refused(/node name "web-1", not "web-2"/));
    await assert.rejects(s.registerNode(mockNode({ Name: 'web-1', NodePool: 'prod' }), { introToken: JWT }), refused(/node pool "default", not "prod"/));

    await s.registerNode(n, { introToken: JWT });
    assert.equal(s.state.nodeById(n.ID)?.Status, 'ready');
    // Registered: the node's SecretID is its credential from now on, token or not.
    await s.registerNode({ ...n, Status: 'ready' });
    await s.heartbeatNode(n.ID, 'ready', n.SecretID);

    // Past its TTL the token admits no one more.
    clock.advance(10 * 60_000);
    await assert.rejects(s.registerNode(mockNode({ Name: 'web-1' }), { introToken: JWT }), refused(/introduction token has expired/));
  });

  it('a TTL above max_identity_ttl is cut to it; no TTL takes default_identity_ttl', async () => {
    const clock = new FakeClock();
    const s = await start('strict', { clock });
    const exp = (jwt: string) => {
      const c = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number; iat: number; nomad_node_pool: string; nomad_node_name: string };
      return c;
    };
    const long = await s.clientIntroduction.createToken({ TTL: 24 * 3600 * 1e9 });
    assert.equal(exp(long.JWT).exp - exp(long.JWT).iat, 30 * 60);
    const dflt = await s.clientIntroduction.createToken({});
    assert.equal(exp(dflt.JWT).exp - exp(dflt.JWT).iat, 5 * 60);
    assert.equal(exp(dflt.JWT).nomad_node_pool, 'default');
    assert.equal(exp(dflt.JWT).nomad_node_name, '');
  });

  it('refuses a malformed request naming the field', async () => {
    const s = await start('strict');
    const bad = (re: RegExp) => (e: unknown) => e instanceof ServerError && e.code === 'INTRODUCTION_REQUEST_INVALID' && e.status === 400 && re.test(e.message);
    await assert.rejects(s.clientIntroduction.createToken({ TTL: 'soon' }), bad(/TTL must be a duration such as "15m", got "soon"/));
    await assert.rejects(s.clientIntroduction.createToken({ TTL: -1 }), bad(/TTL must not be negative/));
    await assert.rejects(s.clientIntroduction.createToken({ NodeName: 7 }), bad(/NodeName must be a string/));
    await assert.rejects(s.clientIntroduction.createToken([]), bad(/JSON object/));
  });

  it('warn admits a node without a token but refuses a bad one; none admits both', async () => {
    const warn = await start('warn');
    await warn.registerNode(mockNode());
    await assert.rejects(warn.registerNode(mockNode(), { introToken: 'a.b.c' }), refused(/introduction token is malformed/));
    const none = await start('none');
    await none.registerNode(mockNode());
    await none.registerNode(mockNode(), { introToken: 'a.b.c' });
  });

  it('the in-process client of the server\'s own agent needs no introduction', async () => {
    const s = await start('strict');
    const n = mockNode();
    await s.registerNode(n, { inProcess: true });
    assert.ok(s.state.nodeById(n.ID));
  });

  for (const enforcement of ['none', 'warn', 'strict'] as const) {
    it(`${enforcement}: a registration naming a known node with another secret is refused and changes nothing`, async () => {
      const s = await start(enforcement);
      const n = mockNode({ Name: 'victim' });
      await s.registerNode(n, { inProcess: true });
      const { JWT } = await s.clientIntroduction.createToken({});
      const rogue = { ...n, Name: 'rogue', SecretID: '99999999-8888-7777-6666-555555555555', HTTPAddr: '10.0.0.66:4646' };
      await assert.rejects(s.registerNode(rogue), secretMismatch);
      // A valid introduction token does not make another node's ID one's own either.
      await assert.rejects(s.registerNode(rogue, { introToken: JWT }), secretMismatch);
      const kept = s.state.nodeById(n.ID)!;
      assert.equal(kept.SecretID, n.SecretID);
      assert.equal(kept.Name, 'victim');
      await assert.rejects(s.heartbeatNode(n.ID, 'ready', rogue.SecretID), secretMismatch);
      await s.heartbeatNode(n.ID, 'ready', n.SecretID);
    });
  }

  it('two racing first registrations of one ID: the first is kept, the second is refused', async () => {
    const s = await start('none');
    const n = mockNode();
    const other = { ...n, SecretID: '99999999-8888-7777-6666-555555555555' };
    const results = await Promise.allSettled([s.registerNode(n), s.registerNode(other)]);
    assert.equal(results[0]!.status, 'fulfilled');
    assert.equal(results[1]!.status, 'rejected');
    assert.ok(secretMismatch((results[1] as PromiseRejectedResult).reason));
    assert.equal(s.state.nodeById(n.ID)!.SecretID, n.SecretID);
  });

  it('the signing key is replicated state: a token minted before a restart admits a node after it', async () => {
    const clock = new FakeClock();
    const dataDir = tempDir();
    const first = await start('strict', { clock, dataDir });
    const { JWT } = await first.clientIntroduction.createToken({ NodeName: 'late' });
    await first.close();
    open.splice(open.indexOf(first), 1);
    const again = await start('strict', { clock, dataDir });
    const n = mockNode({ Name: 'late' });
    await again.registerNode(n, { introToken: JWT });
    assert.ok(again.state.nodeById(n.ID));
    // Still one key: a second token verifies under the same one.
    const second = await again.clientIntroduction.createToken({});
    assert.equal(JSON.parse(Buffer.from(second.JWT.split('.')[0]!, 'base64url').toString()).kid, JSON.parse(Buffer.from(JWT.split('.')[0]!, 'base64url').toString()).kid);
  });

  it('warn: a fleet registering without tokens logs a burst of lines, then their count; every one is in the metric', async () => {
    const lines: { level: number; msg: string; node_id?: string; suppressed?: number }[] = [];
    const logger = pino({ level: 'warn', base: null, timestamp: false }, { write: (l: string) => void lines.push(JSON.parse(l) as (typeof lines)[number]) });
    const clock = new FakeClock();
    const s = await start('warn', { clock, logger });
    const fleet = Array.from({ length: 200 }, (_, i) => mockNode({ Name: `sim-${i}` }));
    for (const n of fleet) await s.registerNode(n);
    const noToken = () => lines.filter((l) => l.msg.startsWith('node registration without introduction token'));
    assert.equal(noToken().length, INTRODUCTION_LOG_BURST, 'not a line per node');
    assert.deepEqual(noToken().map((l) => l.node_id), fleet.slice(0, INTRODUCTION_LOG_BURST).map((n) => n.ID), 'the first ones name their node');
    assert.ok(noToken().every((l) => l.level === 40), 'at WARN, as Nomad');
    assert.equal(s.clientIntroduction.violations(), 200);
    // When the window ends (or the server closes), one line counts the rest.
    await s.close();
    assert.equal(noToken().length, INTRODUCTION_LOG_BURST + 1);
    assert.equal(noToken().at(-1)?.suppressed, 200 - INTRODUCTION_LOG_BURST);
  });
});
