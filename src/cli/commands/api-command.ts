/**
 * What commands that talk to an agent share: the connection flags plus `-json`, building the
 * ApiClient from flags and environment, reporting API errors as Nomad's CLI does (exit 1),
 * and resolving ID prefixes through the list endpoints' `?prefix=`.
 */
import type { Command } from 'commander';
import { ApiClient, ApiError } from '../api-client.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { formatColumns, short } from '../format/columns.js';
import { addGlobalFlags, resolveGlobalOptions, type GlobalFlagValues } from '../global-options.js';
import { cliFetch } from '../cli-tls.js';
import { UNIX_SOCKET_BASE, unixSocketFetch, unixSocketPath } from '../unix-socket-fetch.js';

/** Flags every API command accepts. */
export interface ApiFlags extends GlobalFlagValues {
  json?: boolean;
  verbose?: boolean;
}

/** Adds the connection flags and `-json` to a command. */
export function addApiFlags(cmd: Command): Command {
  return addGlobalFlags(cmd).option('--json', 'print the API JSON');
}

/** The API client for a command's flags. */
export function apiClient(ctx: CliContext, flags: GlobalFlagValues): ApiClient {
  const g = resolveGlobalOptions(flags, ctx.env);
  // unix:///path (Nomad's form for the Task API socket): plain HTTP on that socket.
  const socket = unixSocketPath(g.address);
  if (socket !== undefined) return new ApiClient({ ...g, address: UNIX_SOCKET_BASE }, unixSocketFetch(socket));
  return new ApiClient(g, cliFetch(g.tls));
}

/** Prints a value as indented JSON (the `-json` output). */
export function printJson(ctx: CliContext, value: unknown): void {
  ctx.stdout.write(`${JSON.stringify(value, null, 4)}\n`);
}

/**
 * Runs a command body and turns ApiError into "Error <doing>: <message>" with exit code 1;
 * the body returns its own exit code.
 */
export async function runApiCommand(ctx: CliContext, doing: string, body: () => Promise<number>): Promise<void> {
  try {
    ctx.exitCode = await body();
  } catch (err) {
    if (err instanceof ApiError) {
      ctx.stderr.write(`Error ${doing}: ${err.message}\n`);
      ctx.exitCode = ExitCode.Error;
      return;
    }
    if (err instanceof CliUsageError) throw err;
    if (err instanceof PrefixError) {
      ctx.stderr.write(`${err.message}\n`);
      ctx.exitCode = ExitCode.Error;
      return;
    }
    throw err;
  }
}

/** No object, or several, matched an ID prefix. */
export class PrefixError extends Error {
  readonly code = 'CLI_PREFIX';
  constructor(message: string) {
    super(message);
    this.name = 'PrefixError';
  }
}

/** Nomad requires an even number of hex characters for UUID prefixes; trim an odd one. */
export function sanitizeUuidPrefix(prefix: string): string {
  if (/^[0-9a-f-]+$/i.test(prefix) && prefix.replace(/-/g, '').length % 2 === 1 && prefix.length < 36) return prefix.slice(0, -1);
  return prefix;
}

/**
 * Resolves an ID prefix against a list endpoint (`/v1/allocations`, `/v1/evaluations`,
 * `/v1/nodes`): the full ID when exactly one matches; PrefixError when none or several do
 * (listing the candidates like Nomad).
 */
export async function resolveIdPrefix(api: ApiClient, listPath: string, kind: string, prefix: string): Promise<string> {
  if (prefix.length === 0) throw new CliUsageError(`${kind} ID is required`);
  const { body } = await api.get<{ ID: string; Name?: string }[]>(listPath, { prefix: sanitizeUuidPrefix(prefix) });
  const exact = body.find((o) => o.ID === prefix);
  if (exact) return exact.ID;
  const matches = body.filter((o) => o.ID.startsWith(prefix));
  if (matches.length === 1) return matches[0]!.ID;
  if (matches.length === 0) throw new PrefixError(`No ${kind} with prefix or id "${prefix}" found`);
  const rows = [['ID', 'Name'], ...matches.map((m) => [short(m.ID), m.Name ?? ''])];
  throw new PrefixError(`Prefix matched multiple ${kind}s\n\n${formatColumns(rows)}`);
}
