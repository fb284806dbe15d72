/**
 * The exec sandbox as the hostile review found it held for a task run as `nobody` (the default
 * user; issue 26, "Held"), kept as a test with a real agent: no capabilities, no_new_privs, no
 * /etc/shadow, writes only to local/ and tmp/, a private /proc (the agent's processes are not
 * in it), no /sys, and every mount outside /dev nodev and nosuid. The task only reads and
 * creates files in the places it probes, removing what it could create.
 *
 * Needs what the exec driver needs (root, bwrap, writable cgroups).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentProcess } from '../integration/helpers/agent-process.js';
import { jobAllocs, runJob, startDevAgent, teardown, waitFor } from '../integration/helpers/client-agent.js';

/** Directories the task tries to create a file in; only local/ and tmp/ may take one. */
const PROBED = ['/', '/local', '/tmp', '/secrets', '/alloc', '/alloc/data', '/alloc/tmp', '/alloc/logs', '/etc', '/usr', '/bin', '/lib', '/sbin', '/var', '/dev', '/dev/shm', '/proc', '/run', '/root', '/home'];

const PROBE = [
  'echo "uid=$(id -u)"',
  "grep -E '^(CapInh|CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status | tr -d '\\t ' | sed 's/:/=/'",
  'if cat /etc/shadow >/dev/null 2>&1; then echo shadow=read; else echo shadow=refused; fi',
  `for d in ${PROBED.join(' ')}; do if ( : > "$d/.caravan-probe" ) 2>/dev/null; then echo "write:$d=yes"; rm -f "$d/.caravan-probe"; else echo "write:$d=no"; fi; done`,
  // `[.]`: the pattern must not match the probe's own command line, which quotes it.
  'seen=no; for c in /proc/[0-9]*/cmdline; do if tr "\\0" " " < "$c" 2>/dev/null | grep -q "caravan[.]js agent"; then seen=yes; fi; done; echo "agent_visible=$seen"',
  'if [ -e /sys ]; then echo sys=present; else echo sys=absent; fi',
  // Mount point and options of every mount: `mount:<point>=<options>`.
  "awk '{ print \"mount:\" $5 \"=\" $6 }' /proc/self/mountinfo",
].join('\n');

const JOB = `
job "probe" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "exec"
      config {
        command = "/bin/sh"
        args    = ["-c", ${JSON.stringify(PROBE)}]
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}`;

let agent: AgentProcess | undefined;
let dataDir: string;

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  agent = await startDevAgent({ dataDir });
});

after(async () => {
  await teardown(agent, dataDir);
});

test('an exec task run as nobody: no capabilities, no_new_privs, no shadow, writes only to local/ and tmp/, private /proc, no /sys, nodev', { timeout: 120_000 }, async () => {
  const a = agent!;
  await runJob(a.address, dataDir, 'probe', JOB);
  const stub = await waitFor('the probe to finish', async () => (await jobAllocs(a.address, 'probe')).find((x) => x.ClientStatus === 'complete' || x.ClientStatus === 'failed'), 60_000);
  const logs = join(dataDir, 'client', 'alloc', stub.ID, 'alloc', 'logs');
  const out = readFileSync(join(logs, 't.stdout.0'), 'utf8');
  assert.equal(stub.ClientStatus, 'complete', `${out}\n${readFileSync(join(logs, 't.stderr.0'), 'utf8')}`);
  const seen = new Map<string, string>();
  for (const line of out.split('\n')) {
    const i = line.indexOf('=');
    if (i > 0) seen.set(line.slice(0, i), line.slice(i + 1));
  }
  assert.equal(seen.get('uid'), '65534', 'the task runs as nobody');
  for (const set of ['CapInh', 'CapPrm', 'CapEff', 'CapAmb']) assert.equal(seen.get(set), '0000000000000000', `${set}: no capabilities`);
  assert.equal(seen.get('NoNewPrivs'), '1');
  assert.equal(seen.get('shadow'), 'refused', '/etc/shadow is not readable');
  const writable = PROBED.filter((d) => seen.get(`write:${d}`) === 'yes');
  assert.deepEqual(writable, ['/local', '/tmp'], 'writes land only in local/ and tmp/');
  assert.equal(PROBED.filter((d) => seen.has(`write:${d}`)).length, PROBED.length, 'every directory was probed');
  assert.equal(seen.get('agent_visible'), 'no', 'the agent is not in the task\'s /proc');
  assert.equal(seen.get('sys'), 'absent', 'no /sys');
  const mounts = [...seen].filter(([k]) => k.startsWith('mount:')).map(([k, v]) => ({ point: k.slice('mount:'.length), options: v.split(',') }));
  assert.ok(mounts.some((m) => m.point === '/'), `the task's mounts: ${JSON.stringify(mounts)}`);
  for (const m of mounts.filter((x) => x.point !== '/dev' && !x.point.startsWith('/dev/'))) {
    assert.ok(m.options.includes('nodev'), `${m.point} is mounted without nodev (${m.options.join(',')})`);
    assert.ok(m.options.includes('nosuid'), `${m.point} is mounted without nosuid (${m.options.join(',')})`);
  }
});
