/**
 * Task lifecycle order with a real dev agent: every task of a batch alloc appends
 * "<name> start <ns>" / "<name> end <ns>" to a file in the shared alloc dir, and the test checks
 * Nomad's coordinator order — an ephemeral prestart task ends before main starts, a prestart
 * sidecar starts before main, poststart starts after main started, and poststop starts after
 * every other task ended.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { eventTypes, getAlloc, jobAllocs, runJob, startDevAgent, taskState, teardown, waitFor } from './helpers/client-agent.js';

/** A shell line that appends "<name> <what> <ns>" to the shared order file. */
function mark(name: string, what: string): string {
  return `echo \\"${name} ${what} $(date +%s%N)\\" >> $NOMAD_ALLOC_DIR/order`;
}

function task(name: string, hook: string | null, sidecar: boolean, body: string): string {
  const lifecycle = hook ? `lifecycle {\n        hook    = "${hook}"\n        sidecar = ${sidecar}\n      }` : '';
  return `
    task "${name}" {
      ${lifecycle}
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "${mark(name, 'start')}; ${body}"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }`;
}

const lifecycleHcl = `
job "order" {
  datacenters = ["*"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    ${task('init', 'prestart', false, `sleep 0.5; ${mark('init', 'end')}`)}
    ${task('sidecar', 'prestart', true, `trap '${mark('sidecar', 'end')}; exit 0' INT TERM; while true; do sleep 0.1; done`)}
    ${task('main', null, false, `sleep 1.5; ${mark('main', 'end')}`)}
    ${task('announce', 'poststart', false, mark('announce', 'end'))}
    ${task('cleanup', 'poststop', false, mark('cleanup', 'end'))}
  }
}
`;

test('client: prestart, sidecar, main, poststart and poststop tasks run in the coordinator order', async () => {
  const agent = await startDevAgent();
  const tmp = await mkdtemp(join(tmpdir(), 'cv-jobs-'));
  try {
    await runJob(agent.address, tmp, 'order', lifecycleHcl);
    const stub = await waitFor('finished lifecycle alloc', async () => {
      const [a] = await jobAllocs(agent.address, 'order');
      return a && (a.ClientStatus === 'complete' || a.ClientStatus === 'failed') ? a : undefined;
    }, 30_000);
    const alloc = await getAlloc(agent.address, stub.ID);
    const states = Object.fromEntries(['init', 'sidecar', 'main', 'announce', 'cleanup'].map((t) => [t, eventTypes(taskState(alloc, t))]));
    assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(states));

    const text = await readFile(join(agent.dataDir, 'client', 'alloc', stub.ID, 'alloc', 'order'), 'utf8').catch(async () => {
      // The alloc dir layout is the client's business; fall back to searching the data dir.
      const { execFileSync } = await import('node:child_process');
      const found = execFileSync('find', [agent.dataDir, '-name', 'order', '-path', `*${stub.ID}*`], { encoding: 'utf8' }).trim().split('\n')[0]!;
      return readFile(found, 'utf8');
    });
    const at = new Map<string, bigint>();
    const lines = text.trim().split('\n');
    for (const line of lines) {
      const [name, what, ns] = line.split(' ');
      assert.ok(name && what && ns, `malformed line "${line}"`);
      assert.ok(!at.has(`${name} ${what}`), `"${name} ${what}" appears once:\n${text}`);
      at.set(`${name} ${what}`, BigInt(ns));
    }
    const t = (key: string): bigint => {
      const v = at.get(key);
      assert.ok(v !== undefined, `missing "${key}" in:\n${text}`);
      return v;
    };
    assert.ok(t('init end') < t('main start'), `prestart ephemeral ends before main starts:\n${text}`);
    assert.ok(t('sidecar start') < t('main start'), `sidecar starts before main:\n${text}`);
    // Poststart waits for main to be started by the driver, not for main's shell to reach its first
    // line, so compare the client's StartedAt of both (their own clocks could race under load).
    const startedAt = (task: string): number => Date.parse(taskState(alloc, task).StartedAt ?? '');
    assert.ok(startedAt('announce') >= startedAt('main'), `poststart starts after main started: ${JSON.stringify(states)}`);
    assert.ok(t('announce start') > t('init end'), `poststart starts after the prestart task ended:\n${text}`);
    for (const other of ['init end', 'sidecar end', 'main end', 'announce end']) {
      assert.ok(t('cleanup start') > t(other), `poststop starts after "${other}":\n${text}`);
    }
    assert.ok(t('cleanup end') >= t('cleanup start'));
    // The file order agrees with the clock: poststop's lines come last.
    assert.deepEqual(lines.slice(-2).map((l) => l.split(' ').slice(0, 2).join(' ')), ['cleanup start', 'cleanup end']);
    // The sidecar was stopped by the client, not failed.
    assert.equal(taskState(alloc, 'sidecar').Failed, false);
    assert.equal(taskState(alloc, 'main').Failed, false);
  } finally {
    await teardown(agent, agent.dataDir);
    await rm(tmp, { recursive: true, force: true });
  }
});
