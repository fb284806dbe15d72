/**
 * `caravan job tag apply -name N [-description D] [-version V] JOB` and
 * `caravan job tag unset -name N JOB`: name a version of a job, as `nomad job tag`
 * (PUT/DELETE /v1/job/:id/versions/:name/tag; without -version the current version).
 */
import type { Command } from 'commander';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, runApiCommand, type ApiFlags } from './api-command.js';

type TagFlags = ApiFlags & { name?: string; description?: string; version?: string };

function tagPath(job: string, name: string): string {
  return `/v1/job/${encodeURIComponent(job)}/versions/${encodeURIComponent(name)}/tag`;
}

/** Registers `job tag apply` and `job tag unset`. */
export const jobTagCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const tag = commandGroup(program, 'job').command('tag').description('Tag versions of a job');
    addApiFlags(
      tag
        .command('apply')
        .description('Tag a version of a job (the current one without -version)')
        .argument('<job>')
        .option('--name <name>', 'the tag')
        .option('--description <text>', 'what the version is')
        .option('--version <n>', 'the version to tag'),
    ).action(async (job: string, opts: TagFlags) => {
      if (!opts.name) throw new CliUsageError('-name is required');
      let version: number | undefined;
      if (opts.version !== undefined) {
        version = Number(opts.version);
        if (!Number.isInteger(version) || version < 0) throw new CliUsageError(`invalid -version ${JSON.stringify(opts.version)}: want a non-negative integer`);
      }
      await runApiCommand(ctx, 'tagging job version', async () => {
        const body = version === undefined ? { Latest: true, Description: opts.description ?? '' } : { Version: version, Description: opts.description ?? '' };
        await apiClient(ctx, opts).put(tagPath(job, opts.name!), body);
        ctx.stdout.write(`Job version ${version ?? '(latest)'} tagged with "${opts.name}"\n`);
        return ExitCode.Ok;
      });
    });
    addApiFlags(tag.command('unset').description('Remove a tag from a job version').argument('<job>').option('--name <name>', 'the tag')).action(
      async (job: string, opts: TagFlags) => {
        if (!opts.name) throw new CliUsageError('-name is required');
        await runApiCommand(ctx, 'removing job version tag', async () => {
          await apiClient(ctx, opts).delete(tagPath(job, opts.name!));
          ctx.stdout.write(`Tag "${opts.name}" removed from job "${job}"\n`);
          return ExitCode.Ok;
        });
      },
    );
  },
};
