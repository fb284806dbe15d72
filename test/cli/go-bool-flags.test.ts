import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { buildProgram, main } from '../../src/cli/main.js';
import { normalizeArgv } from '../../src/cli/normalize-argv.js';
import { rewriteGoBoolFlags } from '../../src/cli/go-bool-flags.js';
import { ExitCode, type CliContext } from '../../src/cli/cli-context.js';

function ctx(): CliContext {
  return { stdout: new PassThrough(), stderr: new PassThrough(), env: {}, cwd: process.cwd(), exitCode: ExitCode.Ok };
}

/** Every command of the CLI with the words that reach it. */
function leaves(cmd: Command, path: string[] = []): { cmd: Command; path: string[] }[] {
  if (cmd.commands.length === 0) return [{ cmd, path }];
  return cmd.commands.flatMap((c) => leaves(c, [...path, c.name()]));
}

test('every boolean flag of every command takes Go spellings: -flag, -flag=true, -flag=false, --flag', () => {
  const program = buildProgram(ctx());
  let checked = 0;
  for (const { cmd, path } of leaves(program)) {
    for (const opt of cmd.options.filter((o) => o.isBoolean() && !o.negate)) {
      const name = (opt.long ?? opt.short!).replace(/^-+/, '');
      for (const [spelling, want] of [[`-${name}`, true], [`--${name}`, true], [`-${name}=true`, true], [`-${name}=1`, true], [`-${name}=false`, false], [`--${name}=F`, false]] as const) {
        const args = rewriteGoBoolFlags(program, normalizeArgv([...path, spelling]));
        const flag = args.at(-1)!;
        const hit = cmd.options.find((o) => o.long === flag || o.short === flag);
        assert.ok(hit, `${path.join(' ')} ${spelling}: ${flag} is not an option of the command`);
        assert.equal(hit.attributeName(), opt.attributeName(), `${path.join(' ')} ${spelling}`);
        assert.equal(!hit.negate, want, `${path.join(' ')} ${spelling} sets ${want}`);
        checked++;
      }
    }
  }
  assert.ok(checked > 100, `checked ${checked} spellings`);
});

test('a value that is not a Go boolean is a usage error naming the flag', async () => {
  const err = ctx();
  let text = '';
  (err.stderr as PassThrough).on('data', (c: Buffer) => (text += c.toString()));
  const code = await main(['node', 'caravan', 'job', 'status', '-verbose=maybe', '-address=http://127.0.0.1:1'], err);
  assert.equal(code, ExitCode.Usage);
  assert.match(text, /invalid boolean value "maybe" for -verbose/);
});

test('alloc exec -t=false -i=false: the allocation ID is the first word, not "-=false"', async () => {
  const c = ctx();
  let text = '';
  (c.stderr as PassThrough).on('data', (b: Buffer) => (text += b.toString()));
  // Nothing listens on port 1: the flags parsed when the error is about reaching the agent.
  const code = await main(['node', 'caravan', 'alloc', 'exec', '-t=false', '-i=false', '-address=http://127.0.0.1:1', 'abcd1234', 'ls', '-la'], c);
  assert.equal(code, ExitCode.Error, text);
  assert.doesNotMatch(text, /-=false|unknown option|too many arguments/);
});

test('job status -verbose=true reaches the agent instead of failing as an unknown option', async () => {
  const c = ctx();
  let text = '';
  (c.stderr as PassThrough).on('data', (b: Buffer) => (text += b.toString()));
  const code = await main(['node', 'caravan', 'job', 'status', '-verbose=true', '-address=http://127.0.0.1:1'], c);
  assert.equal(code, ExitCode.Error, text);
  assert.doesNotMatch(text, /unknown option/);
});
