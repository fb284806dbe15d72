/**
 * What of the agent's own environment a task's `${env.X}` may read: every variable except the
 * client's env.denylist (Nomad's default list: the tokens and credentials the agent itself runs
 * with — CONSUL_HTTP_TOKEN, VAULT_TOKEN, AWS keys …). Nomad hands the host environment to the
 * task env builder only after that filter (SetHostEnvvars), and raw_exec's inherited
 * environment is filtered the same way here (raw-exec-config.ts); without it a job author could
 * copy the agent's credentials into a task with `env { T = "${env.VAULT_TOKEN}" }`.
 *
 * Looked up by name, never copied: `process.env` reads through to the C environment on each
 * access, and copying it for every task was the node simulator's costliest client function.
 */
import { DEFAULT_ENV_DENYLIST } from '../../drivers/raw_exec/raw-exec-config.js';

/** A variable of the agent's environment by name, or undefined (unset, denied, or not a string). */
export type HostEnvLookup = (name: string) => string | undefined;

const DEFAULT_DENIED: ReadonlySet<string> = new Set(DEFAULT_ENV_DENYLIST);

/** The lookup of `env` (the agent's environment) a task's interpolation is given. */
export function hostEnvLookup(env: Readonly<Record<string, string | undefined>>, denylist: ReadonlySet<string> = DEFAULT_DENIED): HostEnvLookup {
  return (name) => {
    if (denylist.has(name)) return undefined;
    const v = env[name];
    // String values only: `${toString}` (an Object method) names no variable.
    return typeof v === 'string' ? v : undefined;
  };
}
