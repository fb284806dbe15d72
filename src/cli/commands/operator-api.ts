/**
 * `caravan operator api [-X METHOD] [-H 'Name: value'] [-filter EXPR] [-dryrun] [-verbose] PATH`:
 * a curl for the HTTP API that uses the CLI's address, token, TLS, region and namespace, as
 * Nomad's `operator api`. The answer's body goes to stdout as is; `-verbose` shows the request
 * and response lines on stderr; `-dryrun` prints the equivalent curl command instead. A body
 * for PUT/POST is read from stdin when stdin is not a terminal.
 */
import { readStdin } from '../read-stdin.js';
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { CliUsageError, ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addGlobalFlags, type GlobalFlagValues } from '../global-options.js';
import { apiClient } from './api-command.js';
import { collect } from './job-file-flags.js';

interface OperatorApiFlags extends GlobalFlagValues {
  X?: string;
  H: string[];
  filter?: string;
  dryrun?: boolean;
  verbose?: boolean;
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** A piped request body; undefined from a terminal or when empty. */
async function readBody(): Promise<string | undefined> {
  if (process.stdin.isTTY) return undefined;
  const text = (await readStdin()).toString('utf8');
  return text === '' ? undefined : text;
}

export const operatorApiCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addGlobalFlags(
      commandGroup(program, 'operator')
        .command('api')
        .description('Query the HTTP API with the CLI\'s address, token and TLS settings')
        .argument('<path>', 'API path such as /v1/jobs, or a full URL')
        .option('-X <method>', 'HTTP method (default GET)')
        .option('-H <header>', 'a request header "Name: value" (repeatable)', collect, [])
        .option('--filter <expression>', 'a filter expression for list endpoints')
        .option('--dryrun', 'print the equivalent curl command instead of sending the request')
        .option('--verbose', 'show the request and response lines on stderr'),
    ).action(async (path: string, opts: OperatorApiFlags) => {
      const api = apiClient(ctx, opts);
      const method = (opts.X ?? 'GET').toUpperCase();
      if (!/^[A-Z]+$/.test(method)) throw new CliUsageError(`invalid method "${opts.X}"`);
      const url = new URL(/^https?:\/\//.test(path) ? path : api.url(path.startsWith('/') ? path : `/${path}`));
      if (opts.filter !== undefined) url.searchParams.set('filter', opts.filter);
      const headers: Record<string, string> = {};
      for (const h of opts.H) {
        const i = h.indexOf(':');
        if (i <= 0) throw new CliUsageError(`invalid header "${h}": want "Name: value"`);
        headers[h.slice(0, i).trim()] = h.slice(i + 1).trim();
      }
      if (api.opts.token && !Object.keys(headers).some((k) => k.toLowerCase() === 'x-nomad-token')) headers['X-Nomad-Token'] = api.opts.token;
      if (opts.dryrun) {
        const lines = ['curl', `  -X ${method}`, ...Object.entries(headers).map(([k, v]) => `  -H ${shellQuote(`${k}: ${v}`)}`), `  ${url.toString()}`];
        ctx.stdout.write(`${lines.join(' \\\n')}\n`);
        ctx.exitCode = ExitCode.Ok;
        return;
      }
      const body = method === 'PUT' || method === 'POST' || method === 'PATCH' ? await readBody() : undefined;
      if (opts.verbose) {
        ctx.stderr.write(`> ${method} ${url.toString()}\n`);
        for (const [k, v] of Object.entries(headers)) ctx.stderr.write(`> ${k}: ${k.toLowerCase() === 'x-nomad-token' ? '<redacted>' : v}\n`);
      }
      let res: Response;
      try {
        res = await api.fetchFn(url, { method, headers, ...(body !== undefined ? { body } : {}) });
      } catch (err) {
        ctx.stderr.write(`Error making request: ${(err as Error).message}\n`);
        ctx.exitCode = ExitCode.Error;
        return;
      }
      if (opts.verbose) {
        ctx.stderr.write(`< HTTP ${res.status} ${res.statusText}\n`);
        res.headers.forEach((v, k) => ctx.stderr.write(`< ${k}: ${v}\n`));
      }
      const text = await res.text();
      ctx.stdout.write(text.endsWith('\n') || text === '' ? text : `${text}\n`);
      ctx.exitCode = res.ok ? ExitCode.Ok : ExitCode.Error;
    });
  },
};
