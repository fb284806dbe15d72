/**
 * `caravan alloc fs [-stat] ALLOC [PATH]`: lists a directory of an allocation or prints a
 * file, as `nomad alloc fs`.
 */
import type { Command } from 'commander';
import type { AllocFileInfo } from '../../http/fs/alloc-file-info.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns } from '../format/columns.js';
import { resolveGlobalOptions } from '../global-options.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import { readStreamingBody } from './alloc-stream-body.js';

interface FsFlags extends ApiFlags {
  stat?: boolean;
}

/** Nomad's byte sizes: "12 B", "3.4 KiB". */
export function humanBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(1)} ${units[i]}`;
}

/** The `alloc fs` table of a directory listing. */
export function formatListing(files: AllocFileInfo[]): string {
  const rows = [['Mode', 'Size', 'Modified Time', 'Name']];
  for (const f of files) rows.push([f.FileMode, humanBytes(f.Size), f.ModTime, f.IsDir ? `${f.Name}/` : f.Name]);
  return formatColumns(rows);
}

/** Registers `alloc fs`. */
export const allocFsCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'alloc')
        .command('fs')
        .description('Inspect the contents of an allocation directory')
        .argument('<alloc>', 'allocation ID or prefix')
        .argument('[path]', 'path inside the allocation directory', '/')
        .option('--stat', 'show file information instead of contents'),
    ).action(async (alloc: string, path: string, opts: FsFlags) => {
      await runApiCommand(ctx, 'reading the allocation directory', async () => {
        const api = apiClient(ctx, opts);
        const allocId = await resolveIdPrefix(api, '/v1/allocations', 'allocation', alloc);
        const id = encodeURIComponent(allocId);
        const { body: info } = await api.get<AllocFileInfo>(`/v1/client/fs/stat/${id}`, { path });
        if (opts.stat) {
          if (opts.json) printJson(ctx, info);
          else ctx.stdout.write(`${formatListing([info])}\n`);
          return ExitCode.Ok;
        }
        if (info.IsDir) {
          const { body: files } = await api.get<AllocFileInfo[]>(`/v1/client/fs/ls/${id}`, { path });
          if (opts.json) printJson(ctx, files);
          else ctx.stdout.write(`${formatListing(files)}\n`);
          return ExitCode.Ok;
        }
        const g = resolveGlobalOptions(opts, ctx.env);
        await readStreamingBody(api.url(`/v1/client/fs/cat/${id}`, { path }), g.token, (c) => ctx.stdout.write(c.toString('utf8')), undefined, api.fetchFn);
        return ExitCode.Ok;
      });
    });
  },
};
