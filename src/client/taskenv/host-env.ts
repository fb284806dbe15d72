/**
 * What of the agent's own environment a task may read: every variable except the client's
 * env.denylist (by default Nomad's list: the tokens and credentials the agent itself runs with —
 * CONSUL_HTTP_TOKEN, VAULT_TOKEN, AWS keys …). Nomad hands the host environment to the task env
 * builder only after that filter (SetHostEnvvars), and raw_exec's inherited environment is
 * filtered by the same list (raw-exec-config.ts); without it a job author could copy the agent's
 * credentials into a task with `env { T = "${env.VAULT_TOKEN}" }`.
 *
 * The list is the client option `env.denylist` (`env.blacklist` is its old name), a comma list
 * that replaces the default, as Nomad's `ReadAlternativeDefault(["env.denylist",
 * "env.blacklist"], DefaultEnvDenylist)`: an operator who sets it names every variable to hide.
 *
 * Looked up by name, never copied: `process.env` reads through to the C environment on each
 * access, and copying it for every task was the node simulator's costliest client function.
 */
import { DEFAULT_ENV_DENYLIST } from '../../drivers/raw_exec/raw-exec-config.js';
import { ClientError, ClientErrorCode } from '../client-error.js';

/** A variable of the agent's environment by name, or undefined (unset, denied, or not a string). */
export type HostEnvLookup = (name: string) => string | undefined;

/** The client options that give the denylist, in the order Nomad reads them (the first set wins). */
const ENV_DENYLIST_OPTIONS = ['env.denylist', 'env.blacklist'] as const;

const DEFAULT_DENIED: ReadonlySet<string> = new Set(DEFAULT_ENV_DENYLIST);

/** What no environment variable name holds: `=` ends a name, NUL ends the entry, and whitespace is a mistyped separator. */
const NOT_IN_A_NAME = /[=\0\s]/;

/** A lookup that sees nothing (a driver that runs from an image, or a task built without an agent). */
export const NO_HOST_ENV: HostEnvLookup = () => undefined;

/** The lookup of `env` (the agent's environment) a task's interpolation is given. */
export function hostEnvLookup(env: Readonly<Record<string, string | undefined>>, denylist: ReadonlySet<string> = DEFAULT_DENIED): HostEnvLookup {
  return (name) => {
    if (denylist.has(name)) return undefined;
    const v = env[name];
    // String values only: `${toString}` (an Object method) names no variable.
    return typeof v === 'string' ? v : undefined;
  };
}

/** The option that sets the denylist in `options`, and its value; undefined when neither is set. */
function configured(options: Readonly<Record<string, string>>): { option: string; value: string } | undefined {
  for (const option of ENV_DENYLIST_OPTIONS) {
    const value = options[option];
    if (value !== undefined) return { option, value };
  }
  return undefined;
}

/** The names of a comma list, each trimmed; empty entries (a trailing comma, or `""`) name nothing. */
function names(value: string): string[] {
  return value
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
}

/**
 * Why the client's env denylist option is invalid, as `[option, reason]`, or null when it is
 * valid or unset. An entry that cannot be a variable name would hide nothing, so a list written
 * with spaces or semicolons between its names would silently expose what it meant to hide.
 */
export function envDenylistProblem(options: Readonly<Record<string, string>>): [option: string, reason: string] | null {
  const set = configured(options);
  if (!set) return null;
  if (typeof set.value !== 'string') return [set.option, `must be a comma-separated list of variable names, got ${JSON.stringify(set.value)}`];
  const bad = names(set.value).find((n) => NOT_IN_A_NAME.test(n));
  if (bad === undefined) return null;
  return [set.option, `${JSON.stringify(bad)} is not an environment variable name (names are separated by commas, e.g. "VAULT_TOKEN,MY_SECRET")`];
}

/**
 * The variables of the agent's environment no task sees, from the client's `options`: the
 * configured list when `env.denylist` (or `env.blacklist`) is set — `""` hides nothing, as in
 * Nomad — else Nomad's default. Callers validate first (envDenylistProblem); an invalid list
 * throws here rather than hide less than it says.
 */
export function envDenylist(options: Readonly<Record<string, string>> = {}): ReadonlySet<string> {
  const problem = envDenylistProblem(options);
  if (problem) throw new ClientError(ClientErrorCode.OptionInvalid, `client option ${JSON.stringify(problem[0])}: ${problem[1]}`);
  const set = configured(options);
  return set ? new Set(names(set.value)) : DEFAULT_DENIED;
}
