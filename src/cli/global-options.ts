/**
 * Options every `caravan` command shares: where the server is and which token to present.
 * Flags win over the environment; CARAVAN_* wins over NOMAD_* so Nomad users' shells work as-is.
 */
import type { Command } from 'commander';

/** The default HTTP address of an agent, as Nomad's. */
export const DEFAULT_ADDRESS = 'http://127.0.0.1:4646';

/** TLS settings of the CLI, as Nomad's (`-ca-cert`, `-client-cert`, `-client-key`, `-tls-server-name`, `-tls-skip-verify`). */
export interface CliTlsOptions {
  /** PEM file of the CA that signed the agent's certificate. */
  caCert?: string;
  /** PEM files of the certificate (and key) presented to the agent (mutual TLS). */
  clientCert?: string;
  clientKey?: string;
  /** The name the agent's certificate must carry (and the SNI sent), instead of the address's host. */
  serverName?: string;
  /** Accept any certificate (testing only). */
  skipVerify: boolean;
}

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
  tls: CliTlsOptions;
}

/** The raw flag values a command may carry (`-address`, `-token`, `-region`, `-namespace`). */
export interface GlobalFlagValues {
  address?: string;
  token?: string;
  region?: string;
  namespace?: string;
  caCert?: string;
  clientCert?: string;
  clientKey?: string;
  tlsServerName?: string;
  tlsSkipVerify?: boolean;
  /** false with `-no-color`; see format/colorize.ts. */
  color?: boolean;
  forceColor?: boolean;
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
  let address = firstSet(flags.address, env.CARAVAN_ADDR, env.NOMAD_ADDR) ?? DEFAULT_ADDRESS;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(address)) address = `http://${address}`;
  address = address.replace(/\/+$/, '');
  return {
    address,
    token: firstSet(flags.token, env.CARAVAN_TOKEN, env.NOMAD_TOKEN),
    region: firstSet(flags.region, env.CARAVAN_REGION, env.NOMAD_REGION),
    namespace: givenNamespace(flags, env) ?? 'default',
    tls: resolveTls(flags, env),
  };
}

/** The first value that is set and not empty. */
function firstSet(...vals: (string | undefined)[]): string | undefined {
  return vals.find((v) => v !== undefined && v !== '');
}

/** The namespace the user named: `-namespace`, then CARAVAN_NAMESPACE, then NOMAD_NAMESPACE; undefined for none. */
export function givenNamespace(flags: Pick<GlobalFlagValues, 'namespace'>, env: NodeJS.ProcessEnv): string | undefined {
  return firstSet(flags.namespace, env.CARAVAN_NAMESPACE, env.NOMAD_NAMESPACE);
}

/** The TLS settings: flags, then CARAVAN_*, then NOMAD_* (NOMAD_CACERT, NOMAD_CLIENT_CERT, …). */
function resolveTls(flags: GlobalFlagValues, env: NodeJS.ProcessEnv): CliTlsOptions {
  const out: CliTlsOptions = { skipVerify: false };
  const caCert = firstSet(flags.caCert, env.CARAVAN_CACERT, env.NOMAD_CACERT);
  if (caCert) out.caCert = caCert;
  const clientCert = firstSet(flags.clientCert, env.CARAVAN_CLIENT_CERT, env.NOMAD_CLIENT_CERT);
  if (clientCert) out.clientCert = clientCert;
  const clientKey = firstSet(flags.clientKey, env.CARAVAN_CLIENT_KEY, env.NOMAD_CLIENT_KEY);
  if (clientKey) out.clientKey = clientKey;
  const serverName = firstSet(flags.tlsServerName, env.CARAVAN_TLS_SERVER_NAME, env.NOMAD_TLS_SERVER_NAME);
  if (serverName) out.serverName = serverName;
  const skip = flags.tlsSkipVerify ? 'true' : firstSet(env.CARAVAN_SKIP_VERIFY, env.NOMAD_SKIP_VERIFY);
  out.skipVerify = skip !== undefined && /^(1|t|true|yes)$/i.test(skip);
  return out;
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
    .option('--namespace <ns>', 'namespace (env CARAVAN_NAMESPACE / NOMAD_NAMESPACE, default "default")')
    .option('--ca-cert <file>', 'CA certificate to verify the agent with (env CARAVAN_CACERT / NOMAD_CACERT)')
    .option('--client-cert <file>', 'client certificate for mutual TLS (env CARAVAN_CLIENT_CERT / NOMAD_CLIENT_CERT)')
    .option('--client-key <file>', 'key of the client certificate (env CARAVAN_CLIENT_KEY / NOMAD_CLIENT_KEY)')
    .option('--tls-server-name <name>', "name to verify the agent's certificate against and send as SNI (env CARAVAN_TLS_SERVER_NAME / NOMAD_TLS_SERVER_NAME)")
    .option('--tls-skip-verify', "do not verify the agent's certificate (env CARAVAN_SKIP_VERIFY / NOMAD_SKIP_VERIFY)")
    .option('--no-color', 'disable colored output (env NOMAD_CLI_NO_COLOR)')
    .option('--force-color', 'color the output even when it is not a terminal (env NOMAD_CLI_FORCE_COLOR)');
}
