import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activeLogPath, LogFile } from '../../src/agent/log-file.js';
import { formatLogLine } from '../../src/http/log-monitor.js';
import { defaultAgentConfig, mergeConfig, validateAgentConfig, AgentConfigError } from '../../src/agent/agent-config.js';
import { configLayerFromTree } from '../../src/agent/config-file.js';
import { flagsLayer } from '../../src/cli/commands/agent.js';

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'cv-logfile-'));
  try {
    await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

test('log_file: a directory path gets caravan.log; the file is created 0640 and appended to', async () => {
  await withDir(async (dir) => {
    assert.equal(activeLogPath(`${dir}/`), join(dir, 'caravan.log'));
    assert.equal(activeLogPath(join(dir, 'agent.log')), join(dir, 'agent.log'));
    const f = new LogFile({ path: `${dir}/logs/`, rotateBytes: 0, rotateDurationMs: 86_400_000, rotateMaxFiles: 0 });
    f.write('one\n');
    f.close();
    const again = new LogFile({ path: `${dir}/logs/`, rotateBytes: 0, rotateDurationMs: 86_400_000, rotateMaxFiles: 0 });
    again.write('two\n');
    again.close();
    assert.equal(await readFile(join(dir, 'logs', 'caravan.log'), 'utf8'), 'one\ntwo\n');
    assert.equal((await stat(join(dir, 'logs', 'caravan.log'))).mode & 0o777, 0o640);
  });
});

test('log_rotate_bytes rotates to <name>-<nanos><ext> and log_rotate_max_files keeps the newest archives', async () => {
  await withDir(async (dir) => {
    let now = 1_000;
    const f = new LogFile({ path: join(dir, 'agent.log'), rotateBytes: 10, rotateDurationMs: 86_400_000, rotateMaxFiles: 2, now: () => now });
    for (let i = 0; i < 5; i++) {
      now += 1;
      f.write(`line ${i} ..\n`);
    }
    f.close();
    const files = (await readdir(dir)).sort();
    const archives = files.filter((n) => /^agent-\d+\.log$/.test(n));
    assert.equal(archives.length, 2, files.join(', '));
    assert.ok(files.includes('agent.log'));
    // The newest archive holds the line before the active one; the active file the last line.
    assert.equal(await readFile(join(dir, 'agent.log'), 'utf8'), 'line 4 ..\n');
    assert.equal(await readFile(join(dir, archives[1]!), 'utf8'), 'line 3 ..\n');
    assert.equal(archives[1], `agent-${1005n * 1_000_000n}.log`);
  });
});

test('log_rotate_duration rotates an old file; a negative log_rotate_max_files keeps no archive', async () => {
  await withDir(async (dir) => {
    let now = 0;
    const f = new LogFile({ path: join(dir, 'x'), rotateBytes: 0, rotateDurationMs: 60_000, rotateMaxFiles: -1, now: () => now });
    f.write('old\n');
    now = 59_999;
    f.write('still\n');
    assert.deepEqual((await readdir(dir)).sort(), ['x']);
    now = 60_000;
    f.write('new\n');
    f.close();
    assert.deepEqual((await readdir(dir)).sort(), ['x']);
    assert.equal(await readFile(join(dir, 'x'), 'utf8'), 'new\n');
  });
});

test('text log lines are hclog\'s: time, padded level, component, message, quoted key=value, error=', () => {
  const line = JSON.stringify({ level: 30, time: Date.UTC(2026, 10, 27, 7, 38, 2, 123), component: 'client', agent: 'a', msg: 'node registered', node: 'n1', why: 'two words', err: { type: 'Error', message: 'boom now' } });
  assert.equal(formatLogLine(line), '2026-11-27T07:38:02.123Z [INFO]  client: node registered: node=n1 why="two words" error="boom now"\n');
  assert.equal(formatLogLine(JSON.stringify({ level: 50, time: 0, msg: 'x' })), '1970-01-01T00:00:00.000Z [ERROR] x\n');
  assert.equal(formatLogLine('not json'), 'not json\n');
});

test('log settings from a file and flags, as Nomad names them; bad values name the setting', () => {
  const layer = configLayerFromTree({ log_json: true, log_file: '/var/log/caravan/', log_rotate_bytes: 1024, log_rotate_duration: '1h', log_rotate_max_files: 3, enable_debug: true }, 'f.hcl');
  const c = validateAgentConfig(mergeConfig(mergeConfig(defaultAgentConfig(), { server: { enabled: true }, dataDir: '/d' }), layer));
  assert.deepEqual([c.logJson, c.logFile, c.logRotateBytes, c.logRotateDurationMs, c.logRotateMaxFiles, c.enableDebug], [true, '/var/log/caravan/', 1024, 3_600_000, 3, true]);
  const d = defaultAgentConfig();
  assert.deepEqual([d.logJson, d.logRotateBytes, d.logRotateDurationMs, d.logRotateMaxFiles, d.enableDebug], [false, 0, 86_400_000, 0, false]);
  const f = flagsLayer({ logJson: true, logFile: '/tmp/a.log', logRotateBytes: '10', logRotateDuration: '30m', logRotateMaxFiles: '-1' });
  assert.deepEqual([f.logJson, f.logFile, f.logRotateBytes, f.logRotateDurationMs, f.logRotateMaxFiles], [true, '/tmp/a.log', 10, 1_800_000, -1]);
  assert.throws(() => flagsLayer({ logRotateDuration: 'soon' }), (e: unknown) => e instanceof AgentConfigError && e.field === '-log-rotate-duration');
  assert.throws(() => flagsLayer({ logRotateBytes: '1k' }), (e: unknown) => e instanceof AgentConfigError && e.field === '-log-rotate-bytes');
  assert.throws(() => configLayerFromTree({ log_json: 'yes' }, 'f.hcl'), (e: unknown) => e instanceof AgentConfigError && e.field === 'log_json');
  assert.throws(
    () => validateAgentConfig(mergeConfig(defaultAgentConfig(), { server: { enabled: true }, dataDir: '/d', logRotateBytes: -5 })),
    (e: unknown) => e instanceof AgentConfigError && e.field === 'log_rotate_bytes',
  );
});
