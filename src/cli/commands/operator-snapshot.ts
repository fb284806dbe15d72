/**
 * `caravan operator snapshot save|inspect|restore FILE`, as Nomad's: `save` writes the whole
 * state (GET /v1/operator/snapshot) to FILE, through a temporary file renamed once complete
 * and checked readable; `inspect` reads a saved file and prints its index, size and row counts;
 * `restore` sends one back (PUT /v1/operator/snapshot — servers refuse it for now: 501).
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import { gunzipSync } from 'node:zlib';
import type { Command } from 'commander';
import { decodeSnapshot } from '../../server/snapshot/snapshot-decoder.js';
import type { SerializedState } from '../../server/state/state-store.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatKV } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';

/** A saved snapshot file's state; CliUsageError naming the file when it is not one. */
export async function readSnapshotFile(file: string, bytes: Buffer): Promise<SerializedState> {
  try {
    return await decodeSnapshot([gunzipSync(bytes)]);
  } catch (err) {
    throw new CliUsageError(`${file}: not a readable snapshot: ${(err as Error).message}`);
  }
}

/** What `inspect` shows of a snapshot. */
export function snapshotSummary(s: SerializedState, size: number): [string, string][] {
  return [
    ['Index', String(s.index)],
    ['Size', String(size)],
    ['Jobs', String(s.jobs.length)],
    ['Job Versions', String(s.jobVersions.reduce((n, v) => n + v.length, 0))],
    ['Allocations', String(s.allocs.length)],
    ['Evaluations', String(s.evals.length)],
    ['Nodes', String(s.nodes.length)],
    ['Deployments', String(s.deployments.length)],
    ['Namespaces', String(s.namespaces?.length ?? 0)],
    ['Node Pools', String(s.nodePools?.length ?? 0)],
    ['Variables', String(s.variables?.length ?? 0)],
    ['ACL Tokens', String(s.acl?.tokens?.length ?? 0)],
  ];
}

/** Registers `operator snapshot …`. */
export const operatorSnapshotCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const snap = commandGroup(program, 'operator').command('snapshot').description('Save, inspect and restore snapshots of the state');

    addApiFlags(snap.command('save').description('Save a snapshot of the whole state to a file').argument('<file>')).action(async (file: string, opts: ApiFlags) => {
      await runApiCommand(ctx, 'getting snapshot', async () => {
        const res = await apiClient(ctx, opts).fetchRaw('GET', '/v1/operator/snapshot');
        const bytes = Buffer.from(await res.arrayBuffer());
        // Checked before it replaces anything: a cut-off answer never becomes FILE.
        await readSnapshotFile(file, bytes);
        const tmp = `${file}.${process.pid}.tmp`;
        try {
          await writeFile(tmp, bytes);
          await rename(tmp, file);
        } catch (err) {
          await rm(tmp, { force: true });
          throw new CliUsageError(`writing ${file}: ${(err as Error).message}`);
        }
        ctx.stdout.write(`State file written to ${file}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(snap.command('inspect').description('Show what a saved snapshot holds').argument('<file>')).action(async (file: string, opts: ApiFlags) => {
      const bytes = await readFile(file).catch((err: Error) => {
        throw new CliUsageError(`reading ${file}: ${err.message}`);
      });
      const state = await readSnapshotFile(file, bytes);
      const rows = snapshotSummary(state, bytes.length);
      if (opts.json) printJson(ctx, Object.fromEntries(rows.map(([k, v]) => [k, Number(v)])));
      else ctx.stdout.write(`${formatKV(rows)}\n`);
      ctx.exitCode = ExitCode.Ok;
    });

    addApiFlags(snap.command('restore').description('Restore a saved snapshot into the cluster').argument('<file>')).action(async (file: string, opts: ApiFlags) => {
      const bytes = await readFile(file).catch((err: Error) => {
        throw new CliUsageError(`reading ${file}: ${err.message}`);
      });
      await readSnapshotFile(file, bytes);
      await runApiCommand(ctx, 'restoring snapshot', async () => {
        await apiClient(ctx, opts).fetchRaw('PUT', '/v1/operator/snapshot', {}, bytes);
        ctx.stdout.write('Snapshot Restored\n');
        return ExitCode.Ok;
      });
    });
  },
};
