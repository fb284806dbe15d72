/**
 * A task's driver `config` decoded as Nomad's jobspec2 decodes it (hclutil.BlocksAsAttrs):
 * nested blocks become lists of maps wrapped once per label, object attributes become
 * one-element lists, everything else keeps its value. Nomad's own fixture for this is
 * jobspec2/test-fixtures/config-compatibility.hcl (its TestEquivalentToHCL1_ComplexConfig);
 * this one is ours.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseJobspec, JobspecParseError } from '../../src/jobspec/index.js';
import { rewriteTaskConfigBlocks } from '../../src/jobspec/rewrite-task-config-blocks.js';

const fixture = (name: string): string => readFileSync(join(import.meta.dirname, '../../../test/fixtures/jobspec', name), 'utf8');

test('driver config: blocks with different label counts, nested labelled blocks, maps, mixed lists, large ints', async () => {
  const job = await parseJobspec(fixture('driver-config-blocks.hcl'));
  const config = job.TaskGroups![0]!.Tasks![0]!.Config;
  assert.deepEqual(config, {
    run_for: '5s',
    big_number: 9007199254740991,
    ratio: 0.25,
    mixed: [7, 'x', 1.5, { inner: 'y' }, []],
    empty_list: [],
    labels: [{ team: 'ops', tier: 'gold' }],
    none: [{}],
    computed: { a: 'A', b: 'B' },
    greeting: 'hello gold',
    script: 'echo one\necho two\n',
    plain: [{ on: true }, { on: false }],
    route: [
      { edge: [{ weight: 1 }] },
      { edge: [{ eu: [{ weight: 2 }] }] },
      { edge: [{ eu: [{ fra: [{ weight: 3, tags: [{ pop: 'fra1' }] }] }] }] },
      { core: [{ weight: 4 }] },
    ],
    outer: [{ a: [{ depth: 1, middle: [{ b: [{ depth: 2, leaf: [{ c: [{ depth: 3, note: 'closing } brace and # hash in a string' }] }] }] }] }] }],
    single_line: [{ k: 'v' }],
  });
});

test('driver config rewrite: lines after the config keep their numbers, other blocks are left byte for byte', async () => {
  const src = fixture('driver-config-blocks.hcl');
  const out = rewriteTaskConfigBlocks(src);
  assert.equal(out.split('\n').length, src.split('\n').length);
  const configAt = src.indexOf('      config {');
  assert.equal(out.slice(0, configAt), src.slice(0, configAt));
  assert.equal(out.slice(out.lastIndexOf('single_line') - 1).replace(/\s+/g, ' '), src.slice(src.lastIndexOf('single_line') - 1).replace(/\s+/g, ' ').replace('single_line { k = "v" }', 'single_line = [{"k" = "v"}]'));
  // A mistake after the config is still reported on its own line.
  const late = src.replace(/\n {2}}\n}\n$/, '\n    bogus = 1\n  }\n}\n');
  const lateLine = late.split('\n').findIndex((l) => l.includes('bogus')) + 1;
  await assert.rejects(parseJobspec(late), (err: unknown) => {
    assert.ok(err instanceof JobspecParseError);
    assert.equal(err.problems[0]!.line, lateLine);
    return true;
  });
});

test('driver config rewrite: a syntax error is left for the HCL parser to report with its line', async () => {
  const src = 'job "x" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n      config {\n        command = "/bin/true"\n        args = ["a",\n      }\n    }\n  }\n}\n';
  assert.equal(rewriteTaskConfigBlocks(src), src);
  await assert.rejects(parseJobspec(src), JobspecParseError);
});

test('driver config rewrite: a config of attributes only, or with a dynamic block, is not touched', () => {
  const plain = 'job "x" {\n  group "g" {\n    task "t" {\n      config {\n        command = "/bin/true"\n        args    = ["a"]\n      }\n    }\n  }\n}\n';
  assert.equal(rewriteTaskConfigBlocks(plain), plain);
  const dyn = 'job "x" {\n  group "g" {\n    task "t" {\n      config {\n        dynamic "port" {\n          for_each = [1]\n          content { n = port.value }\n        }\n      }\n    }\n  }\n}\n';
  assert.equal(rewriteTaskConfigBlocks(dyn), dyn);
});
