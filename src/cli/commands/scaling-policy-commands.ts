/**
 * `caravan scaling policy list|info`, as Nomad's: list shows ID, Enabled, Type and Target
 * (`-job` and `-type` filter, `-filter` as every list); info takes a policy ID or a unique
 * prefix of one and shows the policy with its free-form body as JSON.
 */
import type { Command } from 'commander';
import { ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV } from '../format/columns.js';
import { addApiFlags, apiClient, printJson, resolveIdPrefix, runApiCommand, type ApiFlags } from './api-command.js';
import type { ScalingPolicy, ScalingPolicyListStub } from '../../structs/scaling-policy.js';

interface ListFlags extends ApiFlags {
  job?: string;
  type?: string;
  filter?: string;
}

/** Nomad's formatScalingPolicyTarget: "Namespace:default,Job:web,Group:api", in that order. */
export function formatScalingPolicyTarget(target: Record<string, string>): string {
  const order = ['Namespace', 'Job', 'Group', 'Task'];
  const keys = Object.keys(target).sort((a, b) => {
    const ia = order.indexOf(a);
    const ib = order.indexOf(b);
    return (ia < 0 ? order.length : ia) - (ib < 0 ? order.length : ib) || a.localeCompare(b);
  });
  return keys.map((k) => `${k}:${target[k]}`).join(',');
}

/** Registers `scaling policy list|info`. */
export const scalingPolicyCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const policy = commandGroup(program, 'scaling').command('policy').description('Read the scaling policies of the jobs\' groups');
    addApiFlags(
      policy
        .command('list')
        .description('List scaling policies')
        .option('--job <id>', 'only the policies of this job')
        .option('--type <type>', 'only policies of this type (a prefix)')
        .option('--filter <expression>', 'an API filter expression'),
    ).action(async (opts: ListFlags) => {
      await runApiCommand(ctx, 'listing scaling policies', async () => {
        const query = { job: opts.job || undefined, type: opts.type || undefined, filter: opts.filter || undefined };
        const { body } = await apiClient(ctx, opts).get<ScalingPolicyListStub[]>('/v1/scaling/policies', query);
        if (opts.json) {
          printJson(ctx, body);
          return ExitCode.Ok;
        }
        if (body.length === 0) {
          ctx.stdout.write('No policies found\n');
          return ExitCode.Ok;
        }
        const sorted = [...body].sort((a, b) => formatScalingPolicyTarget(a.Target).localeCompare(formatScalingPolicyTarget(b.Target)));
        const rows = [['ID', 'Enabled', 'Type', 'Target'], ...sorted.map((p) => [p.ID, String(p.Enabled), p.Type, formatScalingPolicyTarget(p.Target)])];
        ctx.stdout.write(formatColumns(rows) + '\n');
        return ExitCode.Ok;
      });
    });
    addApiFlags(policy.command('info').description('Show one scaling policy').argument('<policy_id>', 'a policy ID or a unique prefix of one')).action(
      async (id: string, opts: ApiFlags) => {
        await runApiCommand(ctx, 'retrieving scaling policy', async () => {
          const api = apiClient(ctx, opts);
          const full = await resolveIdPrefix(api, '/v1/scaling/policies', 'scaling policy', id);
          const { body: p } = await api.get<ScalingPolicy>(`/v1/scaling/policy/${encodeURIComponent(full)}`);
          if (opts.json) {
            printJson(ctx, p);
            return ExitCode.Ok;
          }
          const kv = formatKV([
            ['ID', p.ID],
            ['Enabled', String(p.Enabled)],
            ['Target', formatScalingPolicyTarget(p.Target)],
            ['Min', String(p.Min)],
            ['Max', String(p.Max)],
          ]);
          ctx.stdout.write(`${kv}\n\nPolicy:\n${JSON.stringify(p.Policy ?? {}, null, 4)}\n`);
          return ExitCode.Ok;
        });
      },
    );
  },
};
