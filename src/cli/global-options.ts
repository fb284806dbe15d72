/**
 * Options every `caravan` command shares: where the server is and which token to present.
 * Flags win over the environment; CARAVAN_* wins over NOMAD_* so Nomad users' shells work as-is.
 */
import type { Command } from 'commander';

/** The default HTTP address of an agent, as Nomad's. */
export const DEFAULT_ADDRESS = 'http://127.0.0.1:4646';

/** Resolved connection settings for commands that talk to an agent. */
export interface GlobalOptions {
  /** Base URL of the agent's HTTP API, without a trailing slash. */
  address: string;
  /** ACL token (secret ID); undefined when none is set. */
  token: string | undefined;
  /** Region to forward to, when given. */
  region: string | undefined;
  /** Namespace the command acts in. */
  namespace: string;
}

/** The raw flag values a command may carry (`-address`, `-token`, `-region`, `-namespace`). */
export interface GlobalFlagValues {
  address?: string;
  token?: string;
  region?: string;
  namespace?: string;
}

/**
 * Resolves the connection settings from flags and environment: `-address`, then CARAVAN_ADDR,
 * then NOMAD_ADDR, then the default; `-token`, then CARAVAN_TOKEN, then NOMAD_TOKEN. Pure: pass
 * the environment in (defaults to process.env) so tests need not touch the real one.
 */
export function resolveGlobalOptions(
  flags: GlobalFlagValues = {},
  env: NodeJS.ProcessEnv = process.env,
): GlobalOptions {
  const pick = (...vals: (string | undefined)[]): string | undefined =>
    vals.find((v) => v !== undefined && v !== '');
  let address = pick(flags.address, env.CARAVAN_ADDR, env.NOMAD_ADDR) ?? DEFAULT_ADDRESS;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) address = `http://${address}`;
  address = address.replace(/\/+$/, '');
  return {
    address,
    token: pick(flags.token, env.CARAVAN_TOKEN, env.NOMAD_TOKEN),
    region: pick(flags.region, env.CARAVAN_REGION, env.NOMAD_REGION),
    namespace: pick(flags.namespace, env.CARAVAN_NAMESPACE, env.NOMAD_NAMESPACE) ?? 'default',
  };
}

/**
 * Adds the shared connection flags to a command that talks to an agent; read them back with
 * `resolveGlobalOptions(cmd.opts())`.
 */
export function addGlobalFlags(cmd: Command): Command {
  return cmd
    .option('--address <url>', `HTTP address of the agent (env CARAVAN_ADDR / NOMAD_ADDR, default ${DEFAULT_ADDRESS})`)
    .option('--token <secret>', 'ACL token (env CARAVAN_TOKEN / NOMAD_TOKEN)')
    .option('--region <region>', 'region to forward the request to')
    .option('--namespace <ns>', 'namespace (default "default")');
}
