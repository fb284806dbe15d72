/**
 * `caravan operator gossip keyring list|install|use|remove|generate`, as Nomad's: the first four
 * call /v1/agent/keyring/* (agent:write) and print Nomad's progress line, then the keys or
 * "error: …" with exit 1 — which is what a Caravan cluster answers, its servers not gossiping
 * (routes/agent-keyring.ts). `generate` makes a new 32-byte key locally, as Nomad's does.
 */
import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { ApiError } from '../api-client.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, type ApiFlags } from './api-command.js';

/** Nomad's KeyringResponse. */
interface KeyringResponse {
  Messages: Record<string, string> | null;
  Keys: Record<string, number> | null;
  NumNodes: number;
}

const OPS = {
  install: { doing: 'Installing new gossip encryption key...', description: 'Install a new gossip encryption key' },
  use: { doing: 'Changing primary gossip encryption key...', description: 'Make an installed key the primary one' },
  remove: { doing: 'Removing gossip encryption key...', description: 'Remove a gossip encryption key' },
} as const;

/** Runs one keyring call, reporting an API error as Nomad's CLI does ("error: …", exit 1). */
async function keyringCall(ctx: CliContext, doing: string, call: () => Promise<KeyringResponse>, print: (r: KeyringResponse) => void): Promise<void> {
  ctx.stdout.write(`${doing}\n`);
  try {
    print(await call());
    ctx.exitCode = ExitCode.Ok;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    ctx.stderr.write(`error: ${err.message}\n`);
    ctx.exitCode = ExitCode.Error;
  }
}

/** Registers `operator gossip keyring …`. */
export const operatorGossipKeyringCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const keyring = commandGroup(program, 'operator').command('gossip').description('Manage the servers\' gossip encryption').command('keyring').description('Manage gossip encryption keys');
    addApiFlags(keyring.command('list').description('List the installed gossip encryption keys')).action(async (opts: ApiFlags) => {
      await keyringCall(ctx, 'Gathering installed encryption keys...', async () => (await apiClient(ctx, opts).get<KeyringResponse>('/v1/agent/keyring/list')).body, (r) => {
        if (opts.json) return printJson(ctx, r);
        const rows = [['Key', 'Installed'], ...Object.entries(r.Keys ?? {}).map(([k, n]) => [k, `${n}/${r.NumNodes}`])];
        ctx.stdout.write(`${formatColumns(rows)}\n`);
      });
    });
    for (const [op, { doing, description }] of Object.entries(OPS)) {
      addApiFlags(keyring.command(op).description(description).argument('<key>', 'the base64 key')).action(async (key: string, opts: ApiFlags) => {
        await keyringCall(ctx, doing, async () => (await apiClient(ctx, opts).put<KeyringResponse>(`/v1/agent/keyring/${op}`, { Key: key })).body, () => undefined);
      });
    }
    keyring
      .command('generate')
      .description('Generate a new gossip encryption key')
      .action(() => {
        ctx.stdout.write(`${randomBytes(32).toString('base64')}\n`);
        ctx.exitCode = ExitCode.Ok;
      });
  },
};
