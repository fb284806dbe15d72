import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { LineDecoder, escapeTaskId, supervisorPaths } from '../../src/drivers/supervisor/protocol.js';
import { SupervisorClient } from '../../src/drivers/supervisor/supervisor-client.js';
import { signalNumber } from '../../src/drivers/supervisor/signals.js';
import { parseProcStat } from '../../src/drivers/proc/proc-stat.js';
import { tempRoot } from './task-config.js';

test('protocol: the line decoder joins chunks and skips bad lines', () => {
  const got: unknown[] = [];
  const bad: string[] = [];
  const d = new LineDecoder((v) => got.push(v), (l) => bad.push(l));
  d.push('{"a":1}\n{"b"');
  d.push(':2}\nnot json\n\n{"c":3}');
  assert.deepEqual(got, [{ a: 1 }, { b: 2 }]);
  assert.deepEqual(bad, ['not json']);
  d.push('\n');
  assert.deepEqual(got, [{ a: 1 }, { b: 2 }, { c: 3 }]);
});

test('protocol: task ids escape to safe file names', () => {
  assert.equal(escapeTaskId('abc-123/web'), 'abc-123%2Fweb');
  assert.equal(escapeTaskId('../x'), '%2E%2E%2Fx');
});

test('signals: names, short names and numbers map to numbers', () => {
  assert.equal(signalNumber('SIGTERM'), 15);
  assert.equal(signalNumber('kill'), 9);
  assert.equal(signalNumber('10'), 10);
  assert.throws(() => signalNumber('SIGNOPE'), /unknown signal/);
});

test('proc: /proc/<pid>/stat parsing copes with spaces and parens in the name', () => {
  const fields = Array.from({ length: 50 }, (_, i) => String(i + 1));
  fields[2] = 'S';
  const text = `42 (a (weird) name) ${fields.slice(2).join(' ')}`;
  const st = parseProcStat(text)!;
  assert.equal(st.pid, 42);
  assert.equal(st.state, 'S');
  assert.equal(st.pgrp, 5);
  assert.equal(st.startTime, 22);
  assert.equal(st.cpuTicks, 14 + 15);
});

test('supervisor: racing starters end with one daemon, which exits when idle', async () => {
  const root = tempRoot();
  const dataDir = join(root, 'data');
  const clients = [0, 1, 2].map(() => new SupervisorClient({ dataDir, idleMs: 800 }));
  try {
    const hellos = await Promise.all(clients.map((c) => c.request('hello', {})));
    assert.equal(new Set(hellos.map((h) => h.pid)).size, 1);
    for (const c of clients) c.close();
    const paths = supervisorPaths(dataDir);
    for (let i = 0; i < 50 && existsSync(paths.pidFile); i++) await sleep(100);
    assert.equal(existsSync(paths.pidFile), false, 'idle supervisor removed its pid file');
    // It removes the pid file just before it exits: give the exit itself a moment.
    const alive = (): boolean => {
      try {
        process.kill(hellos[0]!.pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 50 && alive(); i++) await sleep(100);
    assert.equal(alive(), false, 'idle supervisor exited');
  } finally {
    for (const c of clients) c.close();
    rmSync(root, { recursive: true, force: true });
  }
});
