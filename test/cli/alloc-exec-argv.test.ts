import { test } from 'node:test';
import assert from 'node:assert/strict';
import { normalizeArgv } from '../../src/cli/normalize-argv.js';

test('normalizeArgv: the remote command of alloc exec keeps its own flags', () => {
  assert.deepEqual(normalizeArgv(['alloc', 'exec', '-task', 'web', '-i', '-t', 'abcd', 'ls', '-la', '/tmp']), [
    'alloc', 'exec', '--task', 'web', '-i', '-t', 'abcd', '--', 'ls', '-la', '/tmp',
  ]);
  assert.deepEqual(normalizeArgv(['-address=http://x', 'alloc', 'exec', '-task=web', 'abcd', 'sh', '-c', 'echo -t']), [
    '--address=http://x', 'alloc', 'exec', '--task=web', 'abcd', '--', 'sh', '-c', 'echo -t',
  ]);
  // An explicit separator is kept as is; other commands are unaffected.
  assert.deepEqual(normalizeArgv(['alloc', 'exec', 'abcd', '--', 'ls', '-la']), ['alloc', 'exec', 'abcd', '--', 'ls', '-la']);
  assert.deepEqual(normalizeArgv(['alloc', 'logs', '-stderr', 'abcd']), ['alloc', 'logs', '--stderr', 'abcd']);
  assert.deepEqual(normalizeArgv(['alloc', 'exec', '-task', 'web']), ['alloc', 'exec', '--task', 'web']);
});
