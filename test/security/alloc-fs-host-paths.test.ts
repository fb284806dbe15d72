/**
 * Issue 26 item 8, and the `alloc fs` part of its "held" list, through a real agent and a real
 * task. The task plants, in its own directory, what an attacker would: a FIFO, a unix socket, a
 * directory, a regular file, symlinks to /etc/shadow, to a host file the test made, to `../`
 * (out of the allocation), to `/`, to /proc/1/root, and a symlink loop. Then every `alloc fs`
 * route (ls, stat, cat, readat, stream) and the logs route is asked for each error kind:
 * - no answer names the agent's data directory (errors name only the path the caller gave);
 * - symlinks out of the allocation and FIFOs/sockets are refused, and nothing of what lies behind
 *   them is served.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, realpath, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentProcess } from '../integration/helpers/agent-process.js';
import { startAgent } from '../integration/helpers/agent-process.js';
import { jobAllocs, runJob, teardown, waitFor } from '../integration/helpers/client-agent.js';

const SECRET = 'HOST-SECRET-7f3a';

/** The task: plants its traps in local/, says so in alloc/planted, then sleeps. */
function job(hostFile: string, withSocket: boolean): string {
  const script = [
    'cd local',
    'mkfifo fifo',
    'mkdir dir',
    'echo hello > file',
    'ln -s /etc/shadow shadow',
    `ln -s ${hostFile} secret-link`,
    'ln -s ../../.. up',
    'ln -s / root',
    'ln -s /proc/1/root proc1root',
    'ln -s loop loop',
    ...(withSocket ? [`/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_UNIX).bind("sock")'`] : []),
    'echo planted > ../../alloc/planted',
    'exec /bin/sleep 300',
  ].join('; ');
  return `
job "fsleak" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(script)}]
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;
}

/** One request and what must hold of its answer. */
interface Probe {
  route: 'ls' | 'stat' | 'cat' | 'readat' | 'stream';
  path: string;
  /** The status expected. */
  status: number;
}

test('alloc fs: no answer names the agent data dir; planted symlinks, FIFOs and sockets are refused', async () => {
  const dataDir = await mkdtemp('/tmp/cv-fsleak-');
  const hostDir = await mkdtemp('/tmp/cv-fsleak-host-');
  const hostFile = join(hostDir, 'secret');
  await writeFile(hostFile, `${SECRET}\n`);
  const withSocket = existsSync('/usr/bin/python3');
  let agent: AgentProcess | undefined;
  try {
    agent = await startAgent({ roleArgs: ['-server', '-client'], dataDir });
    const a = agent.address;
    await runJob(a, hostDir, 'fsleak', job(hostFile, withSocket));
    const alloc = await waitFor('the running alloc', async () => (await jobAllocs(a, 'fsleak')).find((x) => x.ClientStatus === 'running'), 30_000);
    const allocDir = join(dataDir, 'client', 'alloc', alloc.ID);
    await waitFor('the traps planted', async () => ((await readFile(join(allocDir, 'alloc', 'planted'), 'utf8').catch(() => '')) === 'planted\n' ? true : undefined), 30_000);

    // What no answer may contain: the data dir (as given and as the kernel resolves it), the
    // client's allocation layout, the contents behind the planted links.
    const forbidden = [dataDir, await realpath(dataDir), '/client/alloc/', SECRET, 'root:'];
    const probes: Probe[] = [
      // A missing file, and a path through a regular file ("not a directory").
      ...(['ls', 'stat', 'cat', 'readat', 'stream'] as const).map((route) => ({ route, path: 't/local/nope', status: 404 })),
      { route: 'cat', path: 't/local/file/x', status: 404 },
      { route: 'ls', path: 't/local/file/x', status: 404 },
      { route: 'ls', path: 't/local/file', status: 400 },
      // A directory read as a file.
      ...(['cat', 'readat', 'stream'] as const).map((route) => ({ route, path: 't/local/dir', status: 400 })),
      // A FIFO (and a socket): never opened as a file, never waited on.
      ...(['cat', 'readat', 'stream'] as const).map((route) => ({ route, path: 't/local/fifo', status: 403 })),
      ...(withSocket ? (['cat', 'readat', 'stream'] as const).map((route) => ({ route, path: 't/local/sock', status: 403 })) : []),
      // Symlinks out of the allocation: /etc/shadow, a host file, ../, /, /proc/1/root; and a loop.
      ...(['stat', 'cat', 'readat', 'stream'] as const).map((route) => ({ route, path: 't/local/shadow', status: 403 })),
      ...(['stat', 'cat', 'readat', 'stream'] as const).map((route) => ({ route, path: 't/local/secret-link', status: 403 })),
      { route: 'ls', path: 't/local/up', status: 403 },
      { route: 'ls', path: 't/local/root', status: 403 },
      { route: 'cat', path: 't/local/root/etc/shadow', status: 403 },
      { route: 'ls', path: 't/local/proc1root', status: 403 },
      { route: 'cat', path: 't/local/proc1root/etc/shadow', status: 403 },
      { route: 'cat', path: 't/local/loop', status: 403 },
      // `..` out of the allocation directory.
      { route: 'ls', path: '../', status: 403 },
      { route: 'cat', path: '../../client/state.db', status: 403 },
    ];
    for (const p of probes) {
      const q = new URLSearchParams({ path: p.path, ...(p.route === 'readat' ? { offset: '0', limit: '64' } : {}), ...(p.route === 'stream' ? { follow: 'false' } : {}) });
      const res = await fetch(`${a}/v1/client/fs/${p.route}/${alloc.ID}?${q}`, { signal: AbortSignal.timeout(15_000) });
      const text = await res.text();
      const what = `${p.route} ${p.path} → ${res.status} ${JSON.stringify(text)}`;
      assert.equal(res.status, p.status, what);
      for (const f of forbidden) assert.ok(!text.includes(f), `${what} contains ${JSON.stringify(f)}`);
      assert.ok(text.includes(p.path.replace(/\/+$/, '')) || p.status === 403, `${what}: the error names the path as given`);
    }

    // The logs route's errors too.
    for (const [query, status] of [['task=nope&type=stdout', 404], ['task=..&type=stdout', 400], ['task=t&type=stdin', 400]] as const) {
      const res = await fetch(`${a}/v1/client/fs/logs/${alloc.ID}?${query}&follow=false`, { signal: AbortSignal.timeout(15_000) });
      const text = await res.text();
      assert.equal(res.status, status, `logs ${query} → ${res.status} ${text}`);
      for (const f of forbidden) assert.ok(!text.includes(f), `logs ${query}: ${JSON.stringify(text)} contains ${JSON.stringify(f)}`);
    }

    // The listing shows the traps for what they are, and the agent still answers.
    const ls = await fetch(`${a}/v1/client/fs/ls/${alloc.ID}?path=t/local`);
    assert.equal(ls.status, 200);
    const entries = (await ls.json()) as { Name: string; FileMode: string }[];
    assert.equal(entries.find((e) => e.Name === 'fifo')?.FileMode.startsWith('p'), true, JSON.stringify(entries));
    assert.equal(entries.find((e) => e.Name === 'shadow')?.FileMode.startsWith('L'), true);
    assert.equal(await readFile(hostFile, 'utf8'), `${SECRET}\n`, 'the host file is untouched');
  } finally {
    await teardown(agent, dataDir);
    await rm(hostDir, { recursive: true, force: true });
  }
});
