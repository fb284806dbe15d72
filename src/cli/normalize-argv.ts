/**
 * Nomad's CLI takes long flags with one dash (`-address=…`, `-var k=v`); commander wants two.
 * Rewriting argv before parsing lets both spellings work.
 */

const LONG_SINGLE_DASH = /^-[A-Za-z][A-Za-z0-9_-]+(=[\s\S]*)?$/;

/**
 * Flags of `alloc exec` (and the shared connection flags) that take the next argument as their
 * value; needed to tell the allocation ID apart from a flag's value.
 */
const EXEC_VALUE_FLAGS = new Set(['task', 'address', 'token', 'region', 'namespace', 'e', 'ca-cert', 'client-cert', 'client-key', 'tls-server-name']);
/** The same for `var lock`, whose child command follows the variable's path. */
const VAR_LOCK_VALUE_FLAGS = new Set(['ttl', 'delay', 'max-retry', 'backoff', 'out', 'address', 'token', 'region', 'namespace', 'ca-cert', 'client-cert', 'client-key', 'tls-server-name']);

function normalizeFlag(a: string): string {
  return LONG_SINGLE_DASH.test(a) ? `-${a}` : a;
}

/**
 * For `alloc exec`, the index just past the allocation ID: everything from there on is the
 * remote command and its own flags (`ls -la`), which `nomad alloc exec` never interprets; the
 * same for `var lock` past the variable's path (and an optional `@spec` file).
 * -1 when argv is neither invocation or has no allocation ID (path) yet.
 */
function execCommandStart(args: readonly string[]): number {
  const words: number[] = [];
  for (let i = 0; i < args.length && words.length < 2; i++) {
    if (args[i] === '--') return -1;
    if (!args[i]!.startsWith('-')) words.push(i);
  }
  if (words.length < 2) return -1;
  const pair = `${args[words[0]!]} ${args[words[1]!]}`;
  if (pair !== 'alloc exec' && pair !== 'var lock') return -1;
  const valueFlags = pair === 'var lock' ? VAR_LOCK_VALUE_FLAGS : EXEC_VALUE_FLAGS;
  for (let i = words[1]! + 1; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') return -1; // the user already separated the command
    if (a.startsWith('-') && a.length > 1) {
      const name = a.replace(/^-+/, '');
      if (!name.includes('=') && valueFlags.has(name)) i++;
      continue;
    }
    // `var lock <path> @spec.json child…`: the spec file is the lock's, not the child's.
    if (pair === 'var lock' && args[i + 1]?.startsWith('@')) return i + 2;
    return i + 1;
  }
  return -1;
}

/**
 * Returns argv with every single-dash long flag (`-flag`, `-flag=v`) turned into `--flag…`.
 * Single-letter flags (`-h`), negative numbers and everything after a bare `--` are left alone,
 * and so is the remote command of `alloc exec` (a `--` is inserted before it so the parser
 * leaves it alone too).
 */
export function normalizeArgv(args: readonly string[]): string[] {
  const cmdStart = execCommandStart(args);
  const head = cmdStart >= 0 ? args.slice(0, cmdStart) : args;
  const out: string[] = [];
  let passthrough = false;
  for (const a of head) {
    if (passthrough) {
      out.push(a);
    } else if (a === '--') {
      passthrough = true;
      out.push(a);
    } else {
      out.push(normalizeFlag(a));
    }
  }
  if (cmdStart >= 0 && cmdStart < args.length) {
    const rest = args.slice(cmdStart);
    out.push(...(rest[0] === '--' ? rest : ['--', ...rest]));
  }
  return out;
}
