/**
 * `caravan operator root keyring list|rotate|remove`: the workload identity keyring, as Nomad's
 * commands — `list` shows every key's metadata (never key material), `rotate` makes a new active
 * key (the old one keeps verifying the identities it signed), `remove` deletes an inactive key.
 */
import type { Command } from 'commander';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, short } from '../format/columns.js';
import type { RootKeyMeta } from '../../structs/root-key.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

interface ListFlags extends ApiFlags {
  verbose?: boolean;
}
interface RotateFlags extends ListFlags {
  full?: boolean;
  now?: boolean;
  prepublish?: string;
}

/** Unix nanoseconds as RFC 3339 to the second, as Nomad prints key times. */
function time(ns: number): string {
  return ns > 0 ? new Date(Math.floor(ns / 1e6)).toISOString().replace(/\.\d{3}Z$/, 'Z') : '<none>';
}

function printKeys(ctx: CliContext, keys: RootKeyMeta[], verbose: boolean, publishTime: boolean): void {
  const rows = [publishTime ? ['Key', 'State', 'Create Time', 'Publish Time'] : ['Key', 'State', 'Create Time']];
  for (const k of keys) {
    const row = [short(k.KeyID, verbose), k.State, time(k.CreateTime)];
    if (publishTime) row.push(time(k.PublishTime));
    rows.push(row);
  }
  ctx.stdout.write(`${formatColumns(rows)}\n`);
}

/** Registers `operator root keyring list|rotate|remove`. */
export const operatorRootKeyringCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const keyring = commandGroup(program, 'operator')
      .command('root')
      .description('Manage the root keys that sign workload identities')
      .command('keyring')
      .description('List, rotate and remove the workload identity root keys');
    addApiFlags(keyring.command('list').description('List the root keys (metadata only)').option('--verbose', 'show full key IDs')).action(async (opts: ListFlags) => {
      await runApiCommand(ctx, 'listing root keys', async () => {
        const { body } = await apiClient(ctx, opts).get<RootKeyMeta[]>('/v1/operator/keyring/keys');
        if (opts.json) printJson(ctx, body);
        else printKeys(ctx, body, opts.verbose === true, false);
        return ExitCode.Ok;
      });
    });
    addApiFlags(
      keyring
        .command('rotate')
        .description('Make a new active root key; older keys keep verifying what they signed')
        .option('--full', 'accepted for Nomad compatibility: Caravan has no keyring-encrypted variables to re-encrypt')
        .option('--now', 'make the new key active at once (the default)')
        .option('--prepublish <duration>', 'not supported: Caravan does not prepublish keys')
        .option('--verbose', 'show full key IDs'),
    ).action(async (opts: RotateFlags) => {
      if (opts.prepublish !== undefined && opts.now) throw new CliUsageError('only one of -now and -prepublish may be set');
      await runApiCommand(ctx, 'rotating the keyring', async () => {
        const query = { ...(opts.full ? { full: true } : {}), ...(opts.prepublish !== undefined ? { prepublish: opts.prepublish } : {}) };
        const { body } = await apiClient(ctx, opts).put<{ Key: RootKeyMeta }>('/v1/operator/keyring/rotate', undefined, query);
        if (opts.json) printJson(ctx, body.Key);
        else printKeys(ctx, [body.Key], opts.verbose === true, true);
        return ExitCode.Ok;
      });
    });
    addApiFlags(keyring.command('remove').description('Remove an inactive root key').argument('<key-id>').option('--force', 'accepted for Nomad compatibility')).action(
      async (keyId: string, opts: ApiFlags) => {
        await runApiCommand(ctx, 'removing the root key', async () => {
          await apiClient(ctx, opts).delete(`/v1/operator/keyring/key/${encodeURIComponent(keyId)}`);
          ctx.stdout.write(`Removed encryption key ${keyId}\n`);
          return ExitCode.Ok;
        });
      },
    );
  },
};
