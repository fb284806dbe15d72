/**
 * How long the server's event loop stalls when N held allocation watches wake at once (issue 30,
 * scenario 2's plan: one allocation on every node). A real server and HTTP layer in this process;
 * N clients' watches (`GET /v1/internal/node/:id/client-allocs?index=…`, one socket each, as a
 * client holds it) in a child process, so that the server's process holds only its own sockets.
 * One apply then writes a system job and one allocation of it to every node (straight into the
 * state store: the wake is measured, not the scheduler or the plan's apply). Printed: the apply's own time, the longest turn of the
 * server's loop from the apply until the last watch is answered, the time to the last answer, the
 * turns the loop made meanwhile, the server process's CPU time meanwhile (on a shared machine the
 * wall times stretch with the load; this does not), and the latency of status reads sent every 20 ms meanwhile (what
 * a heartbeat or a registration waits).
 *
 *   npm run build && node dist/bench/watch-wakeups/wakeup-stall-bench.js [--nodes 2000] [--profile out.cpuprofile]
 *
 * `--profile` writes a CPU profile of the server's process from the apply to the last answer.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request, type IncomingMessage } from 'node:http';
import { Session } from 'node:inspector/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHttpServer } from '../../src/http/http-server.js';
import { Server } from '../../src/server/server.js';
import { mockAlloc, mockJob, mockNode } from '../../test/mock/factories.js';

interface Args {
  nodes: number;
  profile: string;
}

function parseArgs(argv: string[]): Args {
  const out: Args = { nodes: 2000, profile: '' };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, v] = [argv[i]!, argv[i + 1] ?? ''];
    if (flag === '--nodes' && Number.isInteger(Number(v)) && Number(v) > 0) out.nodes = Number(v);
    else if (flag === '--profile' && v !== '') out.profile = v;
    else throw new Error(`unknown or bad argument "${flag} ${v}"`);
  }
  return out;
}

/** One GET (on `agent`'s socket, else on its own); answers the status, the X-Nomad-Index and the body. */
function get(url: string, token: string, agent: Agent | false = false): Promise<{ status: number; index: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent, headers: { 'X-Nomad-Token': token } }, (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, index: Number(res.headers['x-nomad-index'] ?? 0), body }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

// ---- the child: N clients' held watches ----

interface HoldMessage {
  addr: string;
  nodes: { id: string; secret: string }[];
}

async function holder(msg: HoldMessage): Promise<void> {
  let answered = 0;
  const held: Promise<void>[] = [];
  for (let i = 0; i < msg.nodes.length; i += 200) {
    await Promise.all(
      msg.nodes.slice(i, i + 200).map(async (n) => {
        const url = `${msg.addr}/v1/internal/node/${n.id}/client-allocs`;
        // A client's one kept-alive connection: its watch is held on it.
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        const first = await get(url, n.secret, agent);
        if (first.status !== 200) throw new Error(`first read of ${n.id}: ${first.status} ${first.body}`);
        held.push(
          get(`${url}?index=${first.index}&wait=10m`, n.secret, agent).then((r) => {
            if (r.status !== 200 || r.index <= first.index) throw new Error(`watch of ${n.id}: ${r.status} at ${r.index}`);
            answered++;
          }),
        );
      }),
    );
  }
  process.send!({ held: held.length });
  await Promise.all(held);
  process.send!({ answered });
  // Kept open until the server's process ends this one: closing 2,000 sockets is not the wake's cost.
  await new Promise(() => undefined);
}

// ---- the server's process ----

function loadAvg(): string {
  return loadavg()
    .slice(0, 2)
    .map((x) => x.toFixed(1))
    .join('/');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const dir = mkdtempSync(join(tmpdir(), 'caravan-wakeup-bench-'));
  // The nodes do not heartbeat: a TTL longer than the run keeps them up (no node-down evaluations in the measure).
  const server = await Server.open({ dataDir: dir, numWorkers: 1, heartbeat: { minTtlMs: 3_600_000, graceMs: 3_600_000 } });
  const app = createHttpServer({ server });
  let child: ChildProcess | undefined;
  try {
    // Answers of the held watches, once written (their 'finish', after the response hooks).
    let answersSent = 0;
    let lastAnswerAt = 0;
    app.addHook('onResponse', (req, _reply, done) => {
      if (req.url.includes('/client-allocs?index=')) {
        answersSent++;
        lastAnswerAt = performance.now();
      }
      done();
    });

    await app.listen({ host: '127.0.0.1', port: 0 });
    const port = (app.server.address() as { port: number }).port;
    const addr = `http://127.0.0.1:${port}`;
    const nodes = Array.from({ length: args.nodes }, () => mockNode());
    for (let i = 0; i < nodes.length; i += 200) await Promise.all(nodes.slice(i, i + 200).map((n) => server.registerNode(n)));

    child = fork(process.argv[1]!, ['--holder'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const childMessages: Record<string, number>[] = [];
    const nextMessage = (): Promise<Record<string, number>> =>
      new Promise((resolve, reject) => {
        child!.once('message', (m) => resolve(m as Record<string, number>));
        child!.once('exit', (code) => reject(new Error(`holder exited ${code}`)));
      });
    const heldMsg = nextMessage();
    child.send({ addr, nodes: nodes.map((n) => ({ id: n.ID, secret: n.SecretID })) } satisfies HoldMessage);
    childMessages.push(await heldMsg);
    while (server.store.blockedWatches() < args.nodes) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 500));

    const session = new Session();
    if (args.profile) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
      await session.post('Profiler.start');
    }

    // The loop's turns, seen by a 1 ms timer: the longest gap between two of its firings.
    let turns = 0;
    let longestGap = 0;
    /** The longest turn after the apply's own (which holds the apply and the first few answers). */
    let longestLaterGap = 0;
    const longTurns: string[] = [];
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      if (turns > 0) longestLaterGap = Math.max(longestLaterGap, now - last);
      if (now - last > 50) longTurns.push(`${(now - last).toFixed(0)} ms at ${answersSent} answered`);
      last = now;
      turns++;
    }, 1);
    // A status read every 20 ms, on its own socket, while the watches are answered.
    const probes: number[] = [];
    let probing = true;
    const probeLoop = (async () => {
      while (probing) {
        const t = performance.now();
        await get(`${addr}/v1/status/leader`, '');
        probes.push(performance.now() - t);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();

    const answered = nextMessage();
    const job = mockJob({ ID: 'wake', Type: 'system' });
    const index = server.state.latestIndex() + 1;
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    last = t0;
    server.store.transact(() => {
      server.store.putJob(job, index);
      for (const n of nodes) server.store.putAlloc(mockAlloc(job, n, { CreateIndex: index, ModifyIndex: index, AllocModifyIndex: index }), index);
      server.store.finishApply(index);
    });
    const applyMs = performance.now() - t0;
    childMessages.push(await answered);
    const cpu = process.cpuUsage(cpu0);
    probing = false;
    await probeLoop;
    clearInterval(ticker);
    if (args.profile) {
      const { profile } = await session.post('Profiler.stop');
      writeFileSync(args.profile, JSON.stringify(profile));
      session.disconnect();
    }
    const sorted = [...probes].sort((a, b) => a - b);
    const fmt = (x: number): string => x.toFixed(1);
    console.log(
      JSON.stringify({
        nodes: args.nodes,
        answersSent,
        answeredByClients: childMessages.at(-1)?.['answered'],
        applyMs: fmt(applyMs),
        longestLoopTurnMs: fmt(longestGap),
        longestLaterTurnMs: fmt(longestLaterGap),
        lastAnswerAfterMs: fmt(lastAnswerAt - t0),
        serverCpuMs: fmt((cpu.user + cpu.system) / 1000),
        loopTurns: turns,
        turnsOver50Ms: longTurns.slice(0, 10),
        statusReads: probes.length,
        statusReadP50Ms: fmt(sorted[Math.floor(sorted.length / 2)] ?? 0),
        statusReadMaxMs: fmt(sorted.at(-1) ?? 0),
        load: loadAvg(),
      }),
    );
  } finally {
    child?.kill();
    await app.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--holder')) {
  process.once('message', (m) => {
    holder(m as HoldMessage).then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(err);
        process.exit(1);
      },
    );
  });
} else {
  main().then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
