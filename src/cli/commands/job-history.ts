/**
 * `caravan job history ID`: every stored version of a job, newest first.
 */
import type { Command } from 'commander';
import type { Job } from '../../structs/job.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatKV } from '../format/columns.js';
import { formatUnixNanos } from '../format/time-format.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { resolveJobId } from './job-lookup.js';
import { formatJobDiff } from '../format/job-diff-text.js';
import type { JobDiff } from '../../structs/job-diff/index.js';

/**
 * The text of `job history`: one "Version = …" block per version, newest first; with `diffs`
 * (`-p`) each block ends with its diff against the version before it, as Nomad prints it.
 */
export function formatJobHistory(versions: Job[], diffs: JobDiff[] | null = null): string {
  return versions
    .map((v, i) => {
      const rows: [string, string][] = [['Version', String(v.Version)], ['Stable', String(v.Stable)], ['Submit Date', formatUnixNanos(v.SubmitTime)]];
      if (v.VersionTag) {
        rows.push(['Tag Name', v.VersionTag.Name]);
        if (v.VersionTag.Description) rows.push(['Tag Description', v.VersionTag.Description]);
      }
      const diff = diffs?.[i];
      if (diff) rows.push(['Diff', `\n${formatJobDiff(diff, false).trim()}`]);
      return formatKV(rows);
    })
    .join('\n\n');
}

/** Registers `job history`. */
export const jobHistoryCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      commandGroup(program, 'job')
        .command('history')
        .description('Display the versions of a job')
        .argument('<id>', 'job ID or prefix')
        .option('-p', 'show the differences between each version and the one before it')
        .option('--version <n>', 'show only this version')
        .option('--diff-version <n>', 'with -p, compare every version against this version')
        .option('--diff-tag <name>', 'with -p, compare every version against the version with this tag'),
    ).action(async (id: string, opts: ApiFlags & { p?: boolean; version?: string; diffVersion?: string; diffTag?: string }) => {
      await runApiCommand(ctx, 'retrieving job versions', async () => {
        const api = apiClient(ctx, opts);
        const jobId = await resolveJobId(api, id);
        const query = new URLSearchParams();
        if (opts.p) query.set('diffs', 'true');
        if (opts.p && opts.diffVersion !== undefined) query.set('diff_version', opts.diffVersion);
        if (opts.p && opts.diffTag !== undefined) query.set('diff_tag', opts.diffTag);
        const qs = query.size > 0 ? `?${query.toString()}` : '';
        const { body } = await api.get<{ Versions: Job[]; Diffs: JobDiff[] | null }>(`/v1/job/${encodeURIComponent(jobId)}/versions${qs}`);
        let versions = body.Versions;
        let diffs = body.Diffs;
        if (opts.version !== undefined) {
          const i = versions.findIndex((v) => String(v.Version) === opts.version);
          if (i < 0) {
            ctx.stderr.write(`Error: job "${jobId}" has no version ${opts.version}\n`);
            return ExitCode.Error;
          }
          versions = [versions[i]!];
          diffs = diffs ? [diffs[i]!].filter(Boolean) : null;
        }
        if (opts.json) printJson(ctx, versions);
        else ctx.stdout.write(`${formatJobHistory(versions, diffs)}\n`);
        return ExitCode.Ok;
      });
    });
  },
};
