/**
 * `caravan var list|get|put|purge|init`, as Nomad's `nomad var …`: variables through /v1/vars
 * and /v1/var/:path. `put` takes a variable specification (`@file` or `-`, var-spec.ts) and/or
 * `key=value` items (a value `@file` is the file's contents, `key=` removes the item), the items
 * winning over the specification's. `put` is check-and-set as Nomad's — at `-check-index`, else
 * at the specification's modify index, else 0 (only a new variable) — unless `-force`; `purge`
 * with `-check-index`; a stale index is reported as Nomad's "Check-and-Set conflict". `init`
 * writes an example specification.
 * `var lock` is in var-lock.ts.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Variable, VariableMetadata } from '../../structs/variable.js';
import { ApiError } from '../api-client.js';
import { CliRunError, CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import type { CommandModule } from '../command-registry.js';
import { formatColumns, formatKV } from '../format/columns.js';
import { formatUnixNanos } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { registerVarLock } from './var-lock.js';
import { specFormat, VAR_SPEC_EXAMPLE, variableArguments, withSpecNamespace } from '../var-spec.js';

const varPath = (p: string): string => `/v1/var/${p.replace(/^\/+|\/+$/g, '').split('/').map(encodeURIComponent).join('/')}`;

/** The table of `var list`. */
export function formatVarList(vars: VariableMetadata[]): string {
  if (vars.length === 0) return 'No matching variables found';
  return formatColumns([['Namespace', 'Path', 'Last Updated'], ...vars.map((v) => [v.Namespace, v.Path, formatUnixNanos(v.ModifyTime)])]);
}

/** The detail view of `var get` (Nomad's table format). */
export function formatVar(v: Variable): string {
  const head = formatKV([
    ['Namespace', v.Namespace],
    ['Path', v.Path],
    ['Create Time', formatUnixNanos(v.CreateTime)],
    ['Check Index', String(v.ModifyIndex)],
  ]);
  const keys = Object.keys(v.Items ?? {}).sort();
  return `${head}\n\nItems\n${keys.length === 0 ? 'No items' : formatKV(keys.map((k) => [k, v.Items[k]!]))}`;
}

/** Parses a `--check-index` value. */
function checkIndex(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new CliUsageError(`invalid -check-index ${JSON.stringify(raw)}: want a non-negative integer`);
  return Number(raw);
}

/** The items of `var put`: `key=value`, or `key=@file` for a file's contents. */
async function parseItems(args: readonly string[]): Promise<Record<string, string>> {
  const items: Record<string, string> = {};
  for (const a of args) {
    const eq = a.indexOf('=');
    if (eq <= 0) throw new CliUsageError(`invalid item ${JSON.stringify(a)}: want key=value`);
    const key = a.slice(0, eq);
    const value = a.slice(eq + 1);
    items[key] = value.startsWith('@')
      ? await readFile(value.slice(1), 'utf8').catch((err: Error) => {
          throw new CliUsageError(`reading ${value.slice(1)}: ${err.message}`);
        })
      : value;
  }
  return items;
}

/** Reports a 409 as Nomad's CLI does; other errors go on to runApiCommand. */
function casConflict(ctx: CliContext, err: unknown, index: number | undefined): number {
  if (!(err instanceof ApiError) || err.status !== 409) throw err;
  const found = /"ModifyIndex":\s*(\d+)/.exec(err.message)?.[1] ?? '0';
  ctx.stderr.write(
    `Check-and-Set conflict\n\n    Your provided check-index (${index ?? 0}) does not match the server-side index (${found}).\n\n` +
      `    If you are sure you want to perform this operation, add the -force or\n    -check-index=${found} flag before the positional arguments.\n`,
  );
  return ExitCode.Error;
}

/** Registers `var …`. */
export const varCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const v = program.command('var').description('Interact with variables');
    registerVarLock(v, ctx);

    addApiFlags(
      v
        .command('list')
        .description('List variables')
        .argument('[prefix]')
        .option('--filter <expr>', 'a filter expression')
        .option('--out <format>', 'json, table or terse (paths only; Nomad\'s -out)'),
    ).action(async (prefix: string | undefined, opts: ApiFlags & { filter?: string; out?: string }) => {
      const out = opts.out ?? (opts.json ? 'json' : 'table');
      if (!['json', 'table', 'terse'].includes(out)) throw new CliUsageError(`invalid -out ${JSON.stringify(out)}: want json, table or terse`);
      await runApiCommand(ctx, 'retrieving list of variables', async () => {
        const { body } = await apiClient(ctx, opts).get<VariableMetadata[]>('/v1/vars', { prefix, filter: opts.filter });
        if (out === 'json') printJson(ctx, body);
        else if (out === 'terse') ctx.stdout.write(body.map((x) => `${x.Path}\n`).join(''));
        else ctx.stdout.write(`${formatVarList(body)}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(
      v
        .command('get')
        .description('Read a variable')
        .argument('<path>')
        .argument('[item]', 'print only this item\'s value (with a newline)')
        .option('--item <key>', 'print only this item\'s value, without a trailing newline (Nomad\'s -item)')
        .option('--out <format>', 'json, table or none (Nomad\'s -out)'),
    ).action(async (path: string, positional: string | undefined, opts: ApiFlags & { item?: string; out?: string }) => {
      const out = opts.out ?? (opts.json ? 'json' : 'table');
      if (!['json', 'table', 'none'].includes(out)) throw new CliUsageError(`invalid -out ${JSON.stringify(out)}: want json, table or none`);
      await runApiCommand(ctx, 'retrieving variable', async () => {
        const { body } = await apiClient(ctx, opts).get<Variable>(varPath(path));
        const item = opts.item ?? positional;
        if (item !== undefined) {
          const value = body.Items?.[item];
          if (value === undefined) {
            ctx.stderr.write(`Variable does not contain "${item}" item\n`);
            return ExitCode.Error;
          }
          ctx.stdout.write(opts.item !== undefined ? value : `${value}\n`);
        } else if (out === 'json') printJson(ctx, body);
        else if (out === 'table') ctx.stdout.write(`${formatVar(body)}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(
      v
        .command('put')
        .description('Create or update a variable')
        .argument('<path-or-spec>', 'the variable path, or a specification (@file, - for stdin) that names it')
        .argument('[args...]', '[<specification>] [key=value…]')
        .option('--in <format>', 'format of a specification on stdin or in a file without a .hcl/.json extension: hcl or json (default json)')
        .option('--check-index <index>', "write only if the variable is at this modify index (default: the specification's, or 0 — only if it does not exist)")
        .option('--force', 'write whatever the variable\'s index on the server'),
    ).action(async (first: string, more: string[], opts: ApiFlags & { checkIndex?: string; in?: string; force?: boolean }) => {
      const given = checkIndex(opts.checkIndex);
      const { path, spec, rest } = await variableArguments([first, ...more], specFormat(opts.in), ctx.cwd);
      const { flags, moved } = withSpecNamespace(ctx.env, opts, spec);
      // Check-and-set by default, as Nomad's: at the specification's index, 0 for a new variable.
      const cas = given ?? (opts.force ? undefined : moved ? 0 : (spec?.ModifyIndex ?? 0));
      const items = { ...spec?.Items };
      for (const [k, v] of Object.entries(await parseItems(rest))) {
        // `key=` removes the item (from the specification's items), as Nomad's.
        if (v === '') delete items[k];
        else items[k] = v;
      }
      if (Object.keys(items).length === 0) throw new CliUsageError('Not enough arguments (expected <path> and at least one key=value item or a specification with items)');
      await runApiCommand(ctx, 'creating variable', async () => {
        try {
          const { body } = await apiClient(ctx, flags).put<Variable>(varPath(path), { Path: path, Items: items }, { cas });
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`Created variable "${body.Path}" with modify index ${body.ModifyIndex}\n`);
          return ExitCode.Ok;
        } catch (err) {
          return casConflict(ctx, err, cas);
        }
      });
    });

    v.command('init')
      .description('Write an example variable specification')
      .argument('[file]', 'where to write it (default spec.nv.hcl, or spec.nv.json with -out json)')
      .option('--out <format>', 'hcl or json (default hcl)')
      .option('--quiet', 'print nothing on success')
      .action(async (file: string | undefined, opts: { out?: string; quiet?: boolean }) => {
        const format = opts.out ?? 'hcl';
        if (format !== 'hcl' && format !== 'json') throw new CliUsageError(`invalid -out ${JSON.stringify(format)}: want hcl or json`);
        const target = file ?? `spec.nv.${format}`;
        await writeFile(resolve(ctx.cwd, target), VAR_SPEC_EXAMPLE[format], { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
          throw new CliRunError(err.code === 'EEXIST' ? `Variable specification file "${target}" already exists` : `Failed to write "${target}": ${err.message}`);
        });
        if (!opts.quiet) ctx.stdout.write(`Example variable specification written to ${target}\n`);
        ctx.exitCode = ExitCode.Ok;
      });

    addApiFlags(
      v
        .command('purge')
        .description('Delete a variable')
        .argument('<path>')
        .option('--check-index <index>', 'delete only if the variable is at this modify index'),
    ).action(async (path: string, opts: ApiFlags & { checkIndex?: string }) => {
      const cas = checkIndex(opts.checkIndex);
      await runApiCommand(ctx, 'purging variable', async () => {
        try {
          await apiClient(ctx, opts).delete(varPath(path), { cas });
          ctx.stdout.write(`Successfully purged variable "${path}"!\n`);
          return ExitCode.Ok;
        } catch (err) {
          return casConflict(ctx, err, cas);
        }
      });
    });
  },
};
