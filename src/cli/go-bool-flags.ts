/**
 * Go's flag package, which Nomad's CLI uses, takes a boolean flag as `-flag`, `--flag`,
 * `-flag=true` or `-flag=false` (any value strconv.ParseBool reads), also for one-letter flags
 * (`-t=false`, `--t`). Commander knows only `--flag` (`-t` for a one-letter one) and a declared
 * `--no-flag`. Once the commands are registered this rewrites, per command, `-flag=<bool>` on a
 * boolean option to `--flag`, or to a hidden `--no-flag` added to that command for the purpose,
 * and a one-letter flag spelt with two dashes to its one-dash form. Runs after normalizeArgv; everything after
 * a bare `--` (a remote command) is left alone.
 */
import { Option, type Command } from 'commander';
import { CliUsageError } from './cli-context.js';

const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** `-flag`, `--flag`, `-flag=value` or `--flag=value`. */
const FLAG = /^--?([A-Za-z][A-Za-z0-9_-]*)(?:=([\s\S]*))?$/;

/** The value of a Go boolean flag, as strconv.ParseBool reads it. */
export function parseGoBool(flag: string, value: string): boolean {
  if (TRUE.has(value)) return true;
  if (FALSE.has(value)) return false;
  throw new CliUsageError(`invalid boolean value "${value}" for -${flag}: parse error`);
}

function subcommand(cmd: Command, word: string): Command | undefined {
  return cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
}

function optionNamed(cmd: Command, name: string): Option | undefined {
  return cmd.options.find((o) => !o.negate && (o.long === `--${name}` || o.short === `-${name}`));
}

/** The spelling that sets `opt` false on `cmd`: its declared negation, or a hidden one added now. */
function negation(cmd: Command, opt: Option): string {
  const key = opt.attributeName();
  const declared = cmd.options.find((o) => o.negate && o.attributeName() === key);
  if (declared?.long) return declared.long;
  const name = (opt.long ?? opt.short ?? '').replace(/^-+/, '');
  const added = new Option(`--no-${name}`).hideHelp();
  cmd.addOption(added);
  return added.long!;
}

/** Returns `args` with Go-style boolean flag values rewritten for commander (see the module comment). */
export function rewriteGoBoolFlags(program: Command, args: readonly string[]): string[] {
  let cmd = program;
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    if (!a.startsWith('-')) {
      cmd = subcommand(cmd, a) ?? cmd;
      out.push(a);
      continue;
    }
    const m = FLAG.exec(a);
    const opt = m ? optionNamed(cmd, m[1]!) : undefined;
    if (!m || !opt) {
      out.push(a);
      continue;
    }
    const [, name, value] = m;
    const canonical = opt.long ?? opt.short!;
    if (opt.isBoolean()) out.push(value === undefined || parseGoBool(name!, value) ? canonical : negation(cmd, opt));
    else if (value === undefined) out.push(canonical);
    // Go spells a one-letter flag with two dashes too (`--n=5`); commander wants `-n 5`.
    else out.push(...(opt.long ? [`${opt.long}=${value}`] : [canonical, value]));
  }
  return out;
}
