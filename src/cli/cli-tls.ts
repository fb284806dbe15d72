/**
 * The CLI's TLS: the files named by `-ca-cert`, `-client-cert`, `-client-key` (or NOMAD_CACERT …)
 * read into the options of node:https and ws, and the fetch that uses them. Without any TLS
 * setting the CLI uses the platform's trust, as Nomad's.
 */
import { readFileSync } from 'node:fs';
import type { RequestOptions } from 'node:https';
import { tlsFetch } from '../tls/tls-fetch.js';
import type { CliTlsOptions } from './global-options.js';
import { CliUsageError } from './cli-context.js';

function readPem(path: string, flag: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new CliUsageError(`${flag}: cannot read ${path}: ${(err as Error).message}`);
  }
}

/** Connection options of node:https (and ws) for the CLI's TLS settings; undefined when none is set. */
export function cliTlsConnectOptions(t: CliTlsOptions): Omit<RequestOptions, 'method' | 'headers'> | undefined {
  if (!t.caCert && !t.clientCert && !t.clientKey && !t.serverName && !t.skipVerify) return undefined;
  if ((t.clientCert === undefined) !== (t.clientKey === undefined)) throw new CliUsageError('-client-cert and -client-key go together');
  return {
    ...(t.caCert ? { ca: readPem(t.caCert, '-ca-cert') } : {}),
    ...(t.clientCert ? { cert: readPem(t.clientCert, '-client-cert') } : {}),
    ...(t.clientKey ? { key: readPem(t.clientKey, '-client-key') } : {}),
    ...(t.serverName ? { servername: t.serverName } : {}),
    rejectUnauthorized: !t.skipVerify,
  };
}

/** The fetch for the CLI's TLS settings (the global one when none is set). */
export function cliFetch(t: CliTlsOptions): typeof fetch {
  const opts = cliTlsConnectOptions(t);
  return opts ? tlsFetch(opts) : fetch;
}
