/**
 * `caravan namespace apply|list|status|inspect|delete`, as Nomad's. `apply` takes a namespace
 * name with `-description` (creating it, or updating only what the flags give), or a namespace
 * specification file (HCL, or JSON with `-json`) in Nomad's format: name, description, quota,
 * meta { … }, capabilities { enabled_task_drivers, disabled_task_drivers, enabled_network_modes,
 * disabled_network_modes }, node_pool_config { default, allowed, denied }.
 */
import { existsSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { parse as parseHcl } from '@cdktf/hcl2json';
import type { Command } from 'commander';
import type { Namespace } from '../../structs/namespace.js';
import { ApiError, type ApiClient } from '../api-client.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

type Obj = Record<string, unknown>;

/** hcl2json gives every block as a list of bodies; JSON specs may give a plain object. */
function firstBody(v: unknown): Obj | undefined {
  const b = Array.isArray(v) ? v[0] : v;
  return typeof b === 'object' && b !== null && !Array.isArray(b) ? (b as Obj) : undefined;
}

/**
 * The API JSON of a namespace specification (Nomad's snake_case keys); a key of the wrong
 * type is left as is for the server to refuse by name.
 */
export function namespaceFromSpec(tree: Obj): Obj {
  const out: Obj = {};
  if (tree['name'] !== undefined) out['Name'] = tree['name'];
  if (tree['description'] !== undefined) out['Description'] = tree['description'];
  if (tree['quota'] !== undefined) out['Quota'] = tree['quota'];
  const meta = firstBody(tree['meta']);
  if (meta) out['Meta'] = meta;
  const caps = firstBody(tree['capabilities']);
  if (caps) {
    out['Capabilities'] = {
      EnabledTaskDrivers: caps['enabled_task_drivers'] ?? null,
      DisabledTaskDrivers: caps['disabled_task_drivers'] ?? null,
      EnabledNetworkModes: caps['enabled_network_modes'] ?? null,
      DisabledNetworkModes: caps['disabled_network_modes'] ?? null,
    };
  }
  const pools = firstBody(tree['node_pool_config']);
  if (pools) out['NodePoolConfiguration'] = { Default: pools['default'] ?? '', Allowed: pools['allowed'] ?? null, Denied: pools['denied'] ?? null };
  return out;
}

/** Reads a specification file: HCL, or JSON when `json` (or the name ends in .json). */
async function readSpec(path: string, json: boolean): Promise<Obj> {
  const text = await readFile(path, 'utf8');
  let tree: unknown;
  try {
    tree = json || path.endsWith('.json') ? JSON.parse(text) : await parseHcl(path, text);
  } catch (err) {
    throw new CliUsageError(`Error parsing namespace specification ${path}: ${(err as Error).message}`);
  }
  if (typeof tree !== 'object' || tree === null || Array.isArray(tree)) throw new CliUsageError(`${path}: a namespace specification must be an object`);
  // A JSON spec may already use the API's field names.
  const o = tree as Obj;
  return 'Name' in o ? o : namespaceFromSpec(o);
}

/** The current namespace `name`, or undefined when there is none. */
async function existing(api: ApiClient, name: string): Promise<Namespace | undefined> {
  try {
    return (await api.get<Namespace>(`/v1/namespace/${encodeURIComponent(name)}`)).body;
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

/** The detail view of `namespace status`. */
export function formatNamespaceStatus(ns: Namespace): string {
  const list = (l: string[] | null | undefined) => (l && l.length > 0 ? l.join(',') : '');
  const pairs: [string, string][] = [
    ['Name', ns.Name],
    ['Description', ns.Description],
    ['Quota', ns.Quota],
    ['EnabledDrivers', list(ns.Capabilities?.EnabledTaskDrivers)],
    ['DisabledDrivers', list(ns.Capabilities?.DisabledTaskDrivers)],
    ['EnabledNetworkModes', list(ns.Capabilities?.EnabledNetworkModes)],
    ['DisabledNetworkModes', list(ns.Capabilities?.DisabledNetworkModes)],
  ];
  let out = formatKV(pairs);
  const meta = Object.entries(ns.Meta ?? {}).sort(([a], [b]) => (a < b ? -1 : 1));
  if (meta.length > 0) out += `\n\n==> Metadata\n${formatKV(meta)}`;
  return out;
}

/** The table of `namespace list`. */
export function formatNamespaceList(list: Namespace[]): string {
  if (list.length === 0) return 'No namespaces found';
  return formatColumns([['Name', 'Description'], ...list.map((n) => [n.Name, n.Description])]);
}

/** Registers the `namespace` commands. */
export const namespaceCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const group = commandGroup(program, 'namespace');

    addApiFlags(
      group
        .command('apply')
        .description('Create or update a namespace from a name and flags, or from a specification file')
        .argument('<namespace>', 'a namespace name, or the path of a specification file')
        .option('--description <text>', 'the namespace description'),
    ).action(async (arg: string, opts: ApiFlags & { description?: string }) => {
      await runApiCommand(ctx, 'applying namespace', async () => {
        const api = apiClient(ctx, opts);
        let body: Obj;
        if (existsSync(arg) && statSync(arg).isFile()) {
          body = await readSpec(arg, opts.json === true);
        } else {
          const cur = await existing(api, arg);
          body = cur ? { ...cur } : { Name: arg };
          if (opts.description !== undefined) body['Description'] = opts.description;
        }
        const name = typeof body['Name'] === 'string' ? body['Name'] : '';
        if (name === '') throw new CliUsageError('the namespace specification needs a name');
        await api.put(`/v1/namespace/${encodeURIComponent(name)}`, body);
        ctx.stdout.write(`Successfully applied namespace "${name}"!\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(group.command('list').description('List namespaces')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'retrieving namespaces', async () => {
        const { body } = await apiClient(ctx, opts).get<Namespace[]>('/v1/namespaces');
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatNamespaceList(body)}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(group.command('status').description('Display a namespace').argument('<namespace>', 'namespace name')).action(
      async (name: string, opts: ApiFlags) => {
        await runApiCommand(ctx, 'retrieving namespace', async () => {
          const { body } = await apiClient(ctx, opts).get<Namespace>(`/v1/namespace/${encodeURIComponent(name)}`);
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`${formatNamespaceStatus(body)}\n`);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(group.command('inspect').description("Print a namespace's API JSON").argument('<namespace>', 'namespace name')).action(
      async (name: string, opts: ApiFlags) => {
        await runApiCommand(ctx, 'retrieving namespace', async () => {
          const { body } = await apiClient(ctx, opts).get<Namespace>(`/v1/namespace/${encodeURIComponent(name)}`);
          printJson(ctx, body);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(group.command('delete').description('Delete a namespace').argument('<namespace>', 'namespace name')).action(
      async (name: string, opts: ApiFlags) => {
        await runApiCommand(ctx, 'deleting namespace', async () => {
          await apiClient(ctx, opts).delete(`/v1/namespace/${encodeURIComponent(name)}`);
          ctx.stdout.write(`Successfully deleted namespace "${name}"!\n`);
          return ExitCode.Ok;
        });
      },
    );
  },
};
