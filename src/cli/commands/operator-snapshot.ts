/**
 * `caravan operator snapshot save|inspect|restore FILE`, as Nomad's: `save` writes the whole
 * state (GET /v1/operator/snapshot) to FILE, through a temporary file renamed once complete
 * and checked readable; `inspect` reads a saved file and prints what Nomad's prints (ID, size,
 * index, term, version, then a count and size per kind of object; `-json` all of it as JSON);
 * `restore` checks FILE, then sends it to the cluster (PUT /v1/operator/snapshot), which
 * replaces its whole state with it on every server.
 */
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { readSnapshotFile as decodeSnapshotFile } from '../../server/snapshot/snapshot-file.js';
import type { SerializedState } from '../../server/state/serialized-state.js';
import { CliRunError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { humanBytes } from './alloc-fs.js';
import { inspectSnapshot } from './snapshot-inspect.js';

/** A saved snapshot file's state; CliRunError naming the file when it is not one. */
function readSnapshotFile(file: string, bytes: Buffer): SerializedState {
  try {
    return decodeSnapshotFile(bytes);
  } catch (err) {
    throw new CliRunError(`Error verifying snapshot: ${file}: ${(err as Error).message}`);
  }
}

async function readLocal(file: string): Promise<Buffer> {
  return readFile(file).catch((err: Error) => {
    throw new CliRunError(`Error opening snapshot file: ${err.message}`);
  });
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
        readSnapshotFile(file, bytes);
        const tmp = `${file}.${process.pid}.tmp`;
        try {
          await writeFile(tmp, bytes);
          await rename(tmp, file);
        } catch (err) {
          await rm(tmp, { force: true });
          throw new CliRunError(`Error writing snapshot file: ${(err as Error).message}`);
        }
        ctx.stdout.write(`State file written to ${file}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(snap.command('inspect').description('Show what a saved snapshot holds').argument('<file>')).action(async (file: string, opts: ApiFlags) => {
      const bytes = await readLocal(file);
      const info = inspectSnapshot(readSnapshotFile(file, bytes), bytes);
      if (opts.json) {
        printJson(ctx, info);
      } else {
        const m = info.Meta;
        const meta: [string, string][] = [
          ['ID', m.ID],
          ['Size', humanBytes(m.Size)],
          ['Index', String(m.Index)],
          ['Term', String(m.Term)],
          ['Version', String(m.Version)],
        ];
        const total = info.Stats.reduce((n, s) => n + s.Sum, 0);
        const rule = ['----', '-----', '----'];
        const table = [['Type', 'Count', 'Size'], rule, ...info.Stats.map((s) => [s.Name, String(s.Count), humanBytes(s.Sum)]), rule, ['Total', '-', humanBytes(total)]];
        ctx.stdout.write(`${formatKV(meta)}\n\n${formatColumns(table)}\n`);
      }
      ctx.exitCode = ExitCode.Ok;
    });

    addApiFlags(snap.command('restore').description('Restore a saved snapshot into the cluster, replacing its whole state').argument('<file>')).action(async (file: string, opts: ApiFlags) => {
      const bytes = await readLocal(file);
      readSnapshotFile(file, bytes);
      await runApiCommand(ctx, 'restoring snapshot', async () => {
        await apiClient(ctx, opts).fetchRaw('PUT', '/v1/operator/snapshot', {}, bytes);
        ctx.stdout.write('Snapshot Restored\n');
        return ExitCode.Ok;
      });
    });
  },
};
