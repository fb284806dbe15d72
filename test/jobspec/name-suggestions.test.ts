import { test } from 'node:test';
import assert from 'node:assert/strict';
import { main } from '../../src/cli/main.js';
import { parseExecPluginConfig, parseExecTaskConfig } from '../../src/drivers/exec/exec-config.js';
import { parseRawExecConfig } from '../../src/drivers/raw_exec/raw-exec-config.js';
import { didYouMean, nameSuggestion } from '../../src/structs/name-suggestion.js';
import { assertGolden } from '../cli/golden.js';
import { REPO_ROOT } from './repo-root.js';

test('nameSuggestion picks the closest known name within two edits', () => {
  const rows: { name: string; given: string; known: string[]; want: string | undefined }[] = [
    { name: 'transposition', given: 'cuont', known: ['count', 'constraint', 'task'], want: 'count' },
    { name: 'missing letter', given: 'comand', known: ['args', 'command'], want: 'command' },
    { name: 'nothing close', given: 'flavour', known: ['count', 'task'], want: undefined },
    { name: 'exact match is no suggestion', given: 'count', known: ['count'], want: undefined },
  ];
  for (const r of rows) assert.equal(nameSuggestion(r.given, r.known), r.want, r.name);
  assert.equal(didYouMean('memroy', ['cpu', 'memory']), ' Did you mean "memory"?');
  assert.equal(didYouMean('zzz', ['cpu']), '');
});

test('raw_exec and exec name an unknown config field and suggest the known one, before asking for a command', () => {
  assert.throws(() => parseRawExecConfig({ comand: '/bin/true' }), /raw_exec: unknown config field "comand". Did you mean "command"\?/);
  assert.throws(() => parseRawExecConfig({ command: '/bin/true', flavour: 'x' }), (e: Error) => e.message.endsWith('raw_exec: unknown config field "flavour"'));
  assert.equal(parseRawExecConfig({ command: '/bin/true', args: ['a'] }).command, '/bin/true');
  const plugin = parseExecPluginConfig(undefined);
  assert.throws(() => parseExecTaskConfig({ command: '/bin/true', cap_ad: ['net_raw'] }, plugin), /exec: unknown config field "cap_ad". Did you mean "cap_add"\?/);
});

test('job validate lists unknown fields in line order, each with Nomad\'s suggestion', async () => {
  let out = '';
  let err = '';
  const code = await main(['node', 'caravan', 'job', 'validate', 'test/fixtures/jobspecs/bad-typos.hcl'], {
    stdout: { write: (s: string) => (out += s) },
    stderr: { write: (s: string) => (err += s) },
    env: { CARAVAN_ADDR: 'http://127.0.0.1:9' },
    cwd: REPO_ROOT,
  });
  assert.equal(code, 1, out);
  assertGolden('job-validate-typos', err);
});
