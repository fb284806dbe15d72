/**
 * `caravan node pool list|info|apply|delete|nodes|jobs`, as Nomad's `nomad node pool …`: pools
 * through /v1/node/pools and /v1/node/pool/:name. `apply` reads Nomad's node pool specification
 * (`node_pool "name" { description = "…" meta { … } }` in HCL, or the API JSON with `-json`).
 */
import { readFile } from 'node:fs/promises';
import { parse as parseHcl } from '@cdktf/hcl2json';
import type { Command } from 'commander';
import type { JobListStub, NodeListStub } from '../../structs/index.js';
import type { NodePool } from '../../structs/node-pool.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { formatNodeList } from './node-commands.js';

/** The pool a node pool specification file describes (HCL, or API JSON). */
export async function readNodePoolSpec(file: string, text: string, json: boolean): Promise<Record<string, unknown>> {
  if (json || file.endsWith('.json')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch (err) {
      throw new CliUsageError(`${file}: invalid JSON: ${(err as Error).message}`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new CliUsageError(`${file}: want a node pool object`);
    return parsed as Record<string, unknown>;
  }
  let body: Record<string, unknown>;
  try {
    body = (await parseHcl(file, text)) as Record<string, unknown>;
  } catch (err) {
    throw new CliUsageError(`${file}: ${(err as Error).message}`);
  }
  const blocks = body['node_pool'] as Record<string, Record<string, unknown>[]> | undefined;
  const names = Object.keys(blocks ?? {});
  if (names.length !== 1 || (blocks![names[0]!]?.length ?? 0) !== 1) throw new CliUsageError(`${file}: want exactly one node_pool "name" { … } block`);
  const b = blocks![names[0]!]![0]!;
  const known = new Set(['description', 'meta', 'scheduler_config']);
  for (const k of Object.keys(b)) if (!known.has(k)) throw new CliUsageError(`${file}: node_pool "${names[0]}": unsupported argument "${k}"`);
  const meta = (b['meta'] as Record<string, unknown>[] | undefined)?.[0];
  const sched = (b['scheduler_config'] as Record<string, unknown>[] | undefined)?.[0];
  return {
    Name: names[0],
    Description: b['description'] ?? '',
    Meta: meta ?? null,
    SchedulerConfiguration: sched
      ? { SchedulerAlgorithm: sched['scheduler_algorithm'], MemoryOversubscriptionEnabled: sched['memory_oversubscription_enabled'] ?? null }
      : null,
  };
}

/** The table of `node pool list`. */
export function formatPoolList(pools: NodePool[]): string {
  if (pools.length === 0) return 'No node pools found';
  return formatColumns([['Name', 'Description'], ...pools.map((p) => [p.Name, p.Description || '<none>'])]);
}

/** The detail view of `node pool info`. */
export function formatPoolInfo(p: NodePool): string {
  const meta = Object.keys(p.Meta ?? {}).sort();
  const out = formatKV([
    ['Name', p.Name],
    ['Description', p.Description || '<none>'],
  ]);
  return `${out}\n\nMetadata\n${meta.length === 0 ? 'No metadata' : formatKV(meta.map((k) => [k, p.Meta![k]!]))}`;
}

/** Registers `node pool …`. */
export const nodePoolCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const pool = commandGroup(program, 'node').command('pool').description('Interact with node pools');
    const path = (name: string) => `/v1/node/pool/${encodeURIComponent(name)}`;

    addApiFlags(pool.command('list').description('List node pools').option('--prefix <p>', 'only pools whose name starts with it').option('--filter <expr>', 'a filter expression')).action(
      async (opts: ApiFlags & { prefix?: string; filter?: string }) => {
        await runApiCommand(ctx, 'listing node pools', async () => {
          const { body } = await apiClient(ctx, opts).get<NodePool[]>('/v1/node/pools', { prefix: opts.prefix, filter: opts.filter });
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`${formatPoolList(body)}\n`);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(pool.command('info').description('Show a node pool').argument('<name>')).action(async (name: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'reading node pool', async () => {
        const { body } = await apiClient(ctx, opts).get<NodePool>(path(name));
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatPoolInfo(body)}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(pool.command('apply').description('Create or update a node pool from a specification file').argument('<file>')).action(
      async (file: string, opts: ApiFlags) => {
        const text = await readFile(file, 'utf8').catch((err: Error) => {
          throw new CliUsageError(`reading ${file}: ${err.message}`);
        });
        const spec = await readNodePoolSpec(file, text, opts.json === true);
        await runApiCommand(ctx, 'applying node pool', async () => {
          await apiClient(ctx, opts).put('/v1/node/pools', spec);
          ctx.stdout.write(`Successfully applied node pool "${String(spec['Name'])}"!\n`);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(pool.command('delete').description('Delete a node pool').argument('<name>')).action(async (name: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'deleting node pool', async () => {
        await apiClient(ctx, opts).delete(path(name));
        ctx.stdout.write(`Successfully deleted node pool "${name}"!\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(pool.command('nodes').description('List the nodes of a node pool').argument('<name>').option('--verbose', 'show full IDs')).action(
      async (name: string, opts: ApiFlags & { verbose?: boolean }) => {
        await runApiCommand(ctx, 'listing node pool nodes', async () => {
          const { body } = await apiClient(ctx, opts).get<NodeListStub[]>(`${path(name)}/nodes`);
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`${body.length === 0 ? `No nodes in node pool "${name}"` : formatNodeList(body, opts.verbose)}\n`);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(pool.command('jobs').description('List the jobs of a node pool').argument('<name>')).action(async (name: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'listing node pool jobs', async () => {
        const { body } = await apiClient(ctx, opts).get<JobListStub[]>(`${path(name)}/jobs`);
        if (opts.json) printJson(ctx, body);
        else if (body.length === 0) ctx.stdout.write(`No jobs in node pool "${name}"\n`);
        else ctx.stdout.write(`${formatColumns([['ID', 'Type', 'Priority', 'Status'], ...body.map((j) => [j.ID, j.Type, String(j.Priority), j.Status])])}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
