/**
 * The exec driver with a real dev agent and real sandboxed tasks (bubblewrap + cgroups): each
 * test fails without the isolation it names. The machine must be able to isolate (root, bwrap,
 * writable cgroups); if it cannot, the first test fails with the driver's own reason.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import type { Allocation, Node } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { execFrames } from './helpers/poseidon-client.js';
import { getAlloc, jobAllocs, pidAlive, runJob, teardown, waitFor, waitRunning } from './helpers/client-agent.js';

const PIDS_LIMIT = 48;
let agent: AgentProcess;
let dataDir: string;
let jobsDir: string;
let configFile: string;
let hostSecret: string;

function job(name: string, opts: { script: string; type?: 'batch' | 'service'; network?: 'none' | 'host'; memory?: number }): string {
  return `
job "${name}" {
  datacenters = ["dc1"]
  type        = "${opts.type ?? 'batch'}"
  group "g" {
    network {
      mode = "${opts.network ?? 'host'}"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(opts.script)}]
      }
      resources {
        cpu    = 100
        memory = ${opts.memory ?? 64}
      }
    }
  }
}
`;
}

async function finished(jobId: string): Promise<Allocation> {
  const stub = await waitFor(`a terminal alloc of ${jobId}`, async () => (await jobAllocs(agent.address, jobId)).find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'), 60_000);
  return getAlloc(agent.address, stub.ID);
}

async function stdout(allocId: string): Promise<string> {
  const r = await api(agent.address, 'GET', `/v1/client/fs/logs/${allocId}?task=t&type=stdout&plain=true`);
  return r.text;
}

/** The directories of every exec task cgroup under the agent's cgroups (`…/caravan/<task>`). */
function taskCgroups(): string[] {
  const out: string[] = [];
  for (const line of readFileSync(`/proc/${agent.proc.pid}/cgroup`, 'utf8').split('\n')) {
    const m = /^\d+:([^:]+):(.*)$/.exec(line);
    if (!m || !['memory', 'pids'].includes(m[1]!)) continue;
    const parent = join('/sys/fs/cgroup', m[1]!, m[2]!, 'caravan');
    if (!existsSync(parent)) continue;
    for (const e of readdirSync(parent, { withFileTypes: true })) if (e.isDirectory()) out.push(join(parent, e.name));
  }
  return out;
}

async function startTheAgent(port?: number): Promise<AgentProcess> {
  return startAgent({ roleArgs: ['-dev', '-config', configFile], dataDir, ...(port !== undefined ? { port } : {}) });
}

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  jobsDir = await mkdtemp('/tmp/cv-jobs-');
  hostSecret = join(jobsDir, 'host-secret.txt');
  await writeFile(hostSecret, 'HOST-SECRET\n', { mode: 0o644 });
  configFile = join(jobsDir, 'agent.hcl');
  await writeFile(configFile, `plugin "exec" {\n  config {\n    pids_limit = ${PIDS_LIMIT}\n  }\n}\n`);
  agent = await startTheAgent();
});

after(async () => {
  // Whatever a failed test left: the agent, its supervisor and sandboxes, then the task cgroups.
  const cgroups = taskCgroups();
  await agent.kill().catch(() => {});
  await teardown(agent, dataDir);
  for (const d of cgroups) {
    try {
      rmdirSync(d);
    } catch {
      // Already removed by the driver.
    }
  }
  await rm(jobsDir, { recursive: true, force: true });
});

test('exec: the node fingerprints the driver as detected and healthy', async () => {
  const id = await waitFor('the node to register', async () => (await api<Node[]>(agent.address, 'GET', '/v1/nodes')).body[0]?.ID);
  const node = await api<Node>(agent.address, 'GET', `/v1/node/${id}`);
  const exec = node.body.Drivers['exec'];
  assert.ok(exec?.Detected && exec.Healthy, `exec driver not usable on this machine: ${exec?.HealthDescription}`);
  assert.equal(node.body.Attributes['driver.exec'], '1');
});

test('exec: the task runs as nobody, sees only its own processes, cannot read host files nor write the system dirs', async () => {
  const script = [
    'echo "user=$(id -un)"',
    'echo "procs=$(ps -e -o comm= | tr "\\n" ",")"',
    `cat ${hostSecret} 2>/dev/null || echo no-host-secret`,
    `ls ${dataDir} >/dev/null 2>&1 && echo SAW-DATA-DIR || echo no-data-dir`,
    'touch /usr/caravan-probe 2>/dev/null && echo WROTE-USR || echo no-usr-write',
    'touch /etc/caravan-probe 2>/dev/null && echo WROTE-ETC || echo no-etc-write',
    'echo local-ok > /local/written && cat /local/written',
    'echo "dirs=$NOMAD_ALLOC_DIR,$NOMAD_TASK_DIR"',
  ].join('; ');
  await runJob(agent.address, jobsDir, 'iso', job('iso', { script }));
  const alloc = await finished('iso');
  assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(alloc.TaskStates?.['t']?.Events));
  const out = await stdout(alloc.ID);
  assert.match(out, /^user=nobody$/m);
  const procs = /^procs=(.*)$/m.exec(out)?.[1]?.split(',').filter((p) => p !== '') ?? [];
  assert.deepEqual(procs.filter((p) => !['bwrap', 'sh', 'ps', 'tr'].includes(p)), [], `only the task's processes are visible: ${procs}`);
  assert.match(out, /no-host-secret/);
  assert.doesNotMatch(out, /HOST-SECRET/);
  assert.match(out, /no-data-dir/);
  assert.match(out, /no-usr-write/);
  assert.match(out, /no-etc-write/);
  assert.match(out, /^local-ok$/m);
  assert.match(out, /^dirs=\/alloc,\/local$/m);
  assert.equal(existsSync('/usr/caravan-probe') || existsSync('/etc/caravan-probe'), false);
});

test('exec: with network mode "none" a connection to a host loopback listener fails; with "host" it succeeds', async () => {
  const server: Server = createServer((s) => {
    s.on('error', () => {}); // the task's bash closes at once: a reset is expected
    s.end('hello\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const script = `bash -c 'exec 3<>/dev/tcp/127.0.0.1/${port} && echo CONNECTED' 2>/dev/null || echo no-connection`;
    await runJob(agent.address, jobsDir, 'net-none', job('net-none', { script, network: 'none' }));
    await runJob(agent.address, jobsDir, 'net-host', job('net-host', { script, network: 'host' }));
    const none = await finished('net-none');
    const host = await finished('net-host');
    assert.match(await stdout(none.ID), /no-connection/);
    assert.match(await stdout(host.ID), /CONNECTED/, 'the control case reaches the listener');
  } finally {
    server.close();
  }
});

test('exec: a memory hog over its limit is OOM-killed and reported as such', async () => {
  const script = 'x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo survived';
  await runJob(agent.address, jobsDir, 'hog', job('hog', { script, memory: 32 }));
  const alloc = await finished('hog');
  assert.equal(alloc.ClientStatus, 'failed');
  const events = alloc.TaskStates?.['t']?.Events ?? [];
  const term = events.find((e) => e.Type === 'Terminated');
  assert.ok(term, JSON.stringify(events.map((e) => e.Type)));
  assert.equal(term.ExitCode, 137);
  assert.equal(term.Details?.['oom_killed'], 'true');
  assert.match(term.DisplayMessage, /OOM Killed/);
  assert.doesNotMatch(await stdout(alloc.ID), /survived/);
});

test('exec: a fork bomb stops at the pids limit, the host keeps forking, and stopping the job leaves no cgroup or process', async () => {
  const script = 'sleep 3600 & b() { b | b & }; b; wait';
  await runJob(agent.address, jobsDir, 'bomb', job('bomb', { script, type: 'service' }));
  const [alloc] = await waitRunning(agent.address, 'bomb', 1, 30_000);
  // pids.events counts the forks the limit refused: the bomb hit the wall.
  const pidsDir = await waitFor('the bomb to hit the pids limit', () => {
    const dir = taskCgroups().find((d) => d.includes('/pids/') && d.includes(alloc!.ID));
    if (!dir) return undefined;
    return /^max [1-9]/m.test(readFileSync(join(dir, 'pids.events'), 'utf8')) ? dir : undefined;
  }, 30_000);
  assert.equal(Number(readFileSync(join(pidsDir, 'pids.max'), 'utf8')), PIDS_LIMIT);
  assert.ok(Number(readFileSync(join(pidsDir, 'pids.current'), 'utf8')) <= PIDS_LIMIT);
  if (existsSync(join(pidsDir, 'pids.peak'))) assert.ok(Number(readFileSync(join(pidsDir, 'pids.peak'), 'utf8')) <= PIDS_LIMIT);
  const host = spawnSync('/bin/true');
  assert.equal(host.status, 0, 'the host still forks');
  const members = readFileSync(join(pidsDir, 'cgroup.procs'), 'utf8').split('\n').filter((l) => l !== '').map(Number);

  const stop = await api(agent.address, 'DELETE', '/v1/job/bomb');
  assert.equal(stop.status, 200, stop.text);
  await waitFor('the bomb cgroups to be removed', () => (taskCgroups().some((d) => d.includes(alloc!.ID)) ? undefined : true), 30_000);
  assert.deepEqual(members.filter((p) => pidAlive(p)), [], 'no process of the bomb is left');
});

test('exec: alloc exec runs inside the sandbox (same user, processes and root), with and without a tty', async () => {
  await runJob(agent.address, jobsDir, 'sh', job('sh', { script: 'echo ready; exec sleep 3600', type: 'service' }));
  const [alloc] = await waitRunning(agent.address, 'sh', 1, 30_000);
  const probe = ['/bin/sh', '-c', `id -un; ps -e -o comm= | tr "\\n" ","; echo; cat ${hostSecret} 2>/dev/null || echo no-host-secret; cat /proc/self/cgroup | grep -c memory:/$`];
  for (const tty of [false, true]) {
    const r = await execFrames(agent.address, alloc!.ID, { task: 't', command: probe, tty });
    assert.equal(r.exitCode, 0, `tty=${tty}: ${r.stdout} ${r.stderr}`);
    const lines = r.stdout.replace(/\r/g, '').split('\n');
    assert.equal(lines[0], 'nobody', `tty=${tty}: ${r.stdout}`);
    const procs = lines[1]!.split(',').filter((p) => p !== '');
    assert.ok(procs.includes('sleep'), `the task's sleep is visible: ${procs}`);
    // On a terminal, script(1) relays the sandbox's own terminal (sandbox-command.ts).
    const ours = ['bwrap', 'sleep', 'sh', 'ps', 'tr', ...(tty ? ['script'] : [])];
    assert.deepEqual(procs.filter((p) => !ours.includes(p)), [], `tty=${tty}: only sandbox processes: ${procs}`);
    assert.equal(lines[2], 'no-host-secret');
    assert.equal(lines[3], '1', 'exec joined the task cgroup (its cgroup namespace root)');
  }
});

test('exec: alloc exec on a terminal gets a real one: /dev/pts/N, job control, ^C, the window size', async () => {
  const [alloc] = await waitRunning(agent.address, 'sh', 1, 30_000);
  const r = await execFrames(agent.address, alloc!.ID, {
    task: 't',
    command: ['/bin/sh', '-i'],
    tty: true,
    size: { height: 30, width: 100 },
    timeoutMs: 60_000,
    closeStdin: false,
    stdin: [
      // stdin is a terminal the sandbox can name, whose foreground the shell's jobs get.
      'tty; stty size; echo "flags=$-"; ps -o pid=,pgid=,tpgid=,comm= | grep -w ps | sed "s/^/fg=/"\n',
      { waitFor: /fg=\s*\d/ },
      // ^C reaches the foreground job (sleep), not the shell; it is typed once sleep runs.
      "sh -c 'echo fg-ready; exec sleep 300'\n",
      { waitFor: /fg-ready\r\n/ },
      '\x03',
      'echo "interrupted=$?"\n',
      { waitFor: /interrupted=\d/ },
      // A resize from the client reaches the terminal the command has.
      { ttySize: { height: 40, width: 120 } },
      'for i in $(seq 200); do [ "$(stty size)" = "40 120" ] && break; sleep 0.05; done; echo "resized=$(stty size)"\n',
      { waitFor: /resized=\d/ },
      'exit 7\n',
    ],
  });
  const out = r.stdout.replace(/\r/g, '');
  assert.equal(r.exitCode, 7, `the shell ran to its exit: ${JSON.stringify(r.stdout)}`);
  // (Output may follow a prompt on its line: typed-ahead input is echoed while a command runs.)
  assert.match(out, /\/dev\/pts\/\d+$/m, '`tty` names the terminal');
  assert.doesNotMatch(out, /not a tty|Cannot set tty process group|job control turned off/);
  assert.equal(out.split('tty; stty size').length - 1, 1, `what was typed at once is echoed once: ${out}`);
  assert.match(out, /\b30 100$/m, 'the size the client gave first');
  assert.match(out, /flags=[a-z]*m/, 'the interactive shell has job control (monitor mode)');
  const fg = /fg=\s*(\d+)\s+(\d+)\s+(\d+)\s+ps$/m.exec(out);
  assert.ok(fg, `ps's process ids: ${out}`);
  assert.ok(fg[1] === fg[2] && fg[2] === fg[3], `the foreground job is its own process group and owns the terminal: ${fg[0]}`);
  assert.match(out, /interrupted=130$/m, '^C interrupted the foreground sleep');
  assert.match(out, /resized=40 120$/m, 'the resize reached the terminal');
});

test('exec: a terminal session the client closes leaves nothing of it running (relay and command)', async () => {
  const [alloc] = await waitRunning(agent.address, 'sh', 1, 30_000);
  // The command ignores the hangup its terminal's end would send: only the kill ends it.
  const r = await execFrames(agent.address, alloc!.ID, {
    task: 't',
    command: ['/bin/sh', '-c', 'trap "" HUP; echo started; exec sleep 314'],
    tty: true,
    closeStdin: false,
    abortWhen: (o) => o.stdout.includes('started'),
  });
  assert.equal(r.exitCode, null, 'the client ended it before any exit');
  const running = (): string[] =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map((d) => {
        try {
          return readFileSync(`/proc/${d}/cmdline`, 'utf8');
        } catch {
          return '';
        }
      })
      .filter((c) => c.includes('sleep\u0000314') || (c.startsWith('/usr/bin/script\u0000') && c.includes('sleep')));
  await waitFor('the session to be gone', () => (running().length === 0 ? true : undefined), 30_000);
});

test('exec: kill -9 of the agent and a restart reattach the sandboxed task with the same pid; stopping it leaves nothing', async () => {
  const [alloc] = await waitRunning(agent.address, 'sh', 1, 30_000);
  const procsFile = taskCgroups().find((d) => d.includes('/memory/') && d.includes(alloc!.ID));
  assert.ok(procsFile, 'the task has a memory cgroup');
  const before = readFileSync(join(procsFile, 'cgroup.procs'), 'utf8').split('\n').filter((l) => l !== '').map(Number).sort();
  assert.ok(before.length >= 2, `sandbox processes: ${before}`);
  const port = agent.port;
  await agent.kill();
  assert.ok(before.every((p) => pidAlive(p)), 'the sandbox outlived the agent');
  agent = await startTheAgent(port);
  await waitFor('the task to be reattached', async () => {
    const a = await getAlloc(agent.address, alloc!.ID);
    return a.ClientStatus === 'running' ? a : undefined;
  }, 30_000);
  const after = readFileSync(join(procsFile, 'cgroup.procs'), 'utf8').split('\n').filter((l) => l !== '').map(Number).sort();
  assert.deepEqual(after, before, 'same processes, not restarted');
  const st = await getAlloc(agent.address, alloc!.ID);
  assert.equal(st.TaskStates?.['t']?.Restarts ?? 0, 0);
  // The server knew the alloc as running all along; exec works once the client has reattached.
  await waitFor('exec into the reattached sandbox', async () => {
    const r = await execFrames(agent.address, alloc!.ID, { task: 't', command: ['/usr/bin/id', '-un'] });
    return r.exitCode === 0 && r.stdout.trim() === 'nobody' ? true : undefined;
  }, 30_000, 250);

  const stop = await api(agent.address, 'DELETE', '/v1/job/sh');
  assert.equal(stop.status, 200, stop.text);
  await waitFor('the task cgroups to be removed', () => (taskCgroups().some((d) => d.includes(alloc!.ID)) ? undefined : true), 30_000);
  assert.deepEqual(before.filter((p) => pidAlive(p)), [], 'no sandbox process is left');
});

test('exec: a task OOM-killed while the agent is down is reported as OOM Killed after the restart', async () => {
  const script = 'sleep 2; x=$(head -c 200000000 /dev/zero | tr "\\0" a); echo survived';
  await runJob(agent.address, jobsDir, 'hog-down', job('hog-down', { script, memory: 32 }));
  const [alloc] = await waitRunning(agent.address, 'hog-down', 1, 30_000);
  const memDir = await waitFor('the task cgroup', () => taskCgroups().find((d) => d.includes('/memory/') && d.includes(alloc!.ID)));
  const port = agent.port;
  await agent.kill();
  await waitFor('the task to be OOM-killed while the agent is down', () => (/^oom_kill [1-9]/m.test(readFileSync(join(memDir, 'memory.oom_control'), 'utf8')) ? true : undefined), 30_000);
  await waitFor('the sandbox to end', () => (readFileSync(join(memDir, 'cgroup.procs'), 'utf8').trim() === '' ? true : undefined), 30_000);
  agent = await startTheAgent(port);
  const done = await finished('hog-down');
  assert.equal(done.ClientStatus, 'failed');
  const term = (done.TaskStates?.['t']?.Events ?? []).find((e) => e.Type === 'Terminated');
  assert.ok(term, JSON.stringify(done.TaskStates?.['t']?.Events?.map((e) => e.Type)));
  assert.equal(term.ExitCode, 137);
  assert.equal(term.Details?.['oom_killed'], 'true');
  await waitFor('the cgroup to be removed', () => (taskCgroups().some((d) => d.includes(alloc!.ID)) ? undefined : true), 30_000);
});
