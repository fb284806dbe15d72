/**
 * `caravan service list|info|delete`, as Nomad's: the native service catalogue. `list` shows
 * each service's name and tags (with a Namespace column for `-namespace '*'`), `info NAME` its
 * instances (a table, or one block per instance with `-verbose`; `-filter` narrows them), and
 * `delete NAME ID` removes one registration.
 */
import type { Command } from 'commander';
import type { ServiceRegistration, ServiceRegistrationListStub } from '../../structs/service-registration.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV, short } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

const tagList = (tags: readonly string[] | null | undefined): string => `[${(tags ?? []).join(',')}]`;

/** The text of `service list` (Nomad's columns; Namespace only when listing every namespace). */
export function formatServiceList(list: readonly ServiceRegistrationListStub[], allNamespaces: boolean): string {
  const rows: string[][] = [allNamespaces ? ['Service Name', 'Namespace', 'Tags'] : ['Service Name', 'Tags']];
  for (const ns of list) {
    for (const s of [...ns.Services].sort((a, b) => a.ServiceName.localeCompare(b.ServiceName))) {
      rows.push(allNamespaces ? [s.ServiceName, ns.Namespace, tagList(s.Tags)] : [s.ServiceName, tagList(s.Tags)]);
    }
  }
  return rows.length === 1 ? 'No service registrations found' : formatColumns(rows);
}

/** The text of `service info` (a table; one block per instance with `verbose`). */
export function formatServiceInfo(regs: readonly ServiceRegistration[], verbose: boolean): string {
  if (regs.length === 0) return 'No service registrations found';
  if (verbose) {
    return regs
      .map((r) =>
        formatKV([
          ['ID', r.ID],
          ['Service Name', r.ServiceName],
          ['Namespace', r.Namespace],
          ['Job ID', r.JobID],
          ['Alloc ID', r.AllocID],
          ['Node ID', r.NodeID],
          ['Datacenter', r.Datacenter],
          ['Address', `${r.Address}:${r.Port}`],
          ['Tags', tagList(r.Tags)],
        ]),
      )
      .join('\n\n');
  }
  const rows = [['Job ID', 'Address', 'Tags', 'Node ID', 'Alloc ID'], ...regs.map((r) => [r.JobID, `${r.Address}:${r.Port}`, tagList(r.Tags), short(r.NodeID), short(r.AllocID)])];
  return formatColumns(rows);
}

/** Registers `service list`, `service info` and `service delete`. */
export const serviceCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const group = commandGroup(program, 'service');

    addApiFlags(group.command('list').description('List the registered services')).action(async (opts: ApiFlags) => {
      await runApiCommand(ctx, 'listing services', async () => {
        const api = apiClient(ctx, opts);
        const { body } = await api.get<ServiceRegistrationListStub[]>('/v1/services');
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatServiceList(body ?? [], api.opts.namespace === '*')}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(
      group
        .command('info')
        .description('Show the instances of a registered service')
        .argument('<name>', 'service name')
        .option('--verbose', 'show every field of each instance')
        .option('--filter <expr>', 'a filter expression on the instances'),
    ).action(async (name: string, opts: ApiFlags & { filter?: string }) => {
      await runApiCommand(ctx, 'reading service', async () => {
        const { body } = await apiClient(ctx, opts).get<ServiceRegistration[]>(`/v1/service/${encodeURIComponent(name)}`, { filter: opts.filter });
        if (opts.json) printJson(ctx, body);
        else ctx.stdout.write(`${formatServiceInfo(body ?? [], opts.verbose === true)}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(group.command('delete').description('Delete one registration of a service').argument('<name>', 'service name').argument('<id>', 'registration ID')).action(
      async (name: string, id: string, opts: ApiFlags) => {
        await runApiCommand(ctx, 'deleting service registration', async () => {
          await apiClient(ctx, opts).delete(`/v1/service/${encodeURIComponent(name)}/${encodeURIComponent(id)}`);
          ctx.stdout.write('Successfully deleted service registration\n');
          return ExitCode.Ok;
        });
      },
    );
  },
};
