/**
 * `caravan acl …`, as Nomad's: `acl bootstrap`, `acl policy apply|list|info|delete`,
 * `acl token create|list|info|self|update|delete` and `acl role create|list|info|update|delete`,
 * each with `-json`. Secrets are printed only where Nomad prints them (the created or read token).
 */
import { readStdin } from '../read-stdin.js';
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { AclPolicy, AclPolicyListStub, AclRole, AclToken, AclTokenListStub } from '../../structs/acl.js';
import { DurationParseError, parseDuration } from '../../structs/duration.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { addApiFlags, apiClient, printJson, runApiCommand, type ApiFlags } from './api-command.js';
import { collect } from './job-file-flags.js';
import { formatPolicy, formatPolicyList, formatRole, formatRoleList, formatToken, formatTokenList } from './acl-format.js';

type Flags = ApiFlags & Record<string, unknown>;

/** Prints `value` as JSON with -json, else its text form. */
function show<T>(ctx: CliContext, opts: Flags, value: T, text: (v: T) => string): number {
  if (opts.json) printJson(ctx, value);
  else ctx.stdout.write(`${text(value)}\n`);
  return ExitCode.Ok;
}

async function readSource(path: string): Promise<string> {
  if (path === '-') return (await readStdin()).toString('utf8');
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    throw new CliUsageError(`cannot read ${path}: ${(err as Error).message}`);
  }
}

/** `-ttl=1h` as nanoseconds (0 when not given). */
function ttlNanos(v: unknown): number {
  if (v === undefined || v === '') return 0;
  try {
    return parseDuration(String(v));
  } catch (err) {
    if (err instanceof DurationParseError) throw new CliUsageError(`invalid -ttl ${JSON.stringify(v)}: want a duration such as 1h`);
    throw err;
  }
}

function tokenBody(opts: Flags, creating: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (opts['name'] !== undefined) body['Name'] = opts['name'];
  if (opts['type'] !== undefined || creating) body['Type'] = opts['type'] ?? 'client';
  const policies = opts['policy'] as string[];
  if (policies.length > 0 || creating) body['Policies'] = policies;
  const roles = [...(opts['roleId'] as string[]).map((ID) => ({ ID })), ...(opts['roleName'] as string[]).map((Name) => ({ Name }))];
  if (roles.length > 0 || creating) body['Roles'] = roles;
  if (opts['global']) body['Global'] = true;
  const ttl = ttlNanos(opts['ttl']);
  if (ttl > 0) body['ExpirationTTL'] = ttl;
  return body;
}

function roleBody(opts: Flags): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  if (opts['name'] !== undefined) body['Name'] = opts['name'];
  if (opts['description'] !== undefined) body['Description'] = opts['description'];
  const policies = opts['policy'] as string[];
  if (policies.length > 0) body['Policies'] = policies.map((Name) => ({ Name }));
  return body;
}

/** Registers the `acl` commands. */
export const aclCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const acl = commandGroup(program, 'acl');
    const run = (doing: string, body: (opts: Flags, ...args: string[]) => Promise<number>) => async (...a: unknown[]) => {
      const cmd = a[a.length - 1] as Command;
      const opts = cmd.opts<Flags>();
      const args = a.slice(0, -2).map((x) => (x === undefined ? '' : String(x)));
      await runApiCommand(ctx, doing, () => body(opts, ...args));
    };

    addApiFlags(acl.command('bootstrap').description('Bootstrap the ACL system: create the first management token').argument('[file]', 'a file holding the bootstrap secret'))
      .action(run('bootstrapping ACL', async (opts, file) => {
        const secret = file ? (await readSource(file)).trim() : undefined;
        const { body } = await apiClient(ctx, opts).post<AclToken>('/v1/acl/bootstrap', secret ? { BootstrapSecret: secret } : undefined);
        return show(ctx, opts, body, formatToken);
      }));

    // ---- policies ----
    const policy = acl.command('policy').description('Interact with ACL policies');
    addApiFlags(
      policy
        .command('apply')
        .description('Create or update an ACL policy from a file (HCL or JSON; "-" reads stdin)')
        .argument('<name>')
        .argument('<path>')
        .option('--description <text>', 'the policy\'s description')
        .option('--job <id>', 'attach the policy to this job\'s tasks (in -namespace) for their workload identity')
        .option('--group <name>', 'with -job: only this task group')
        .option('--task <name>', 'with -job and -group: only this task'),
    )
      .action(run('writing ACL policy', async (opts, name, path) => {
        const rules = await readSource(path!);
        const job = opts['job'];
        if ((opts['group'] || opts['task']) && !job) throw new CliUsageError('-group and -task need -job');
        if (opts['task'] && !opts['group']) throw new CliUsageError('-task needs -group');
        const jobAcl = job ? { Namespace: opts['namespace'] ?? 'default', JobID: job, Group: opts['group'] ?? '', Task: opts['task'] ?? '' } : undefined;
        await apiClient(ctx, opts).post(`/v1/acl/policy/${encodeURIComponent(name!)}`, { Name: name, Description: opts['description'] ?? '', Rules: rules, ...(jobAcl ? { JobACL: jobAcl } : {}) });
        ctx.stdout.write(`Successfully wrote "${name}" ACL policy!\n`);
        return ExitCode.Ok;
      }));
    addApiFlags(policy.command('list').description('List ACL policies')).action(run('listing ACL policies', async (opts) => {
      const { body } = await apiClient(ctx, opts).get<AclPolicyListStub[]>('/v1/acl/policies');
      return show(ctx, opts, body, formatPolicyList);
    }));
    addApiFlags(policy.command('info').description('Show an ACL policy').argument('<name>')).action(run('reading ACL policy', async (opts, name) => {
      const { body } = await apiClient(ctx, opts).get<AclPolicy>(`/v1/acl/policy/${encodeURIComponent(name!)}`);
      return show(ctx, opts, body, formatPolicy);
    }));
    addApiFlags(policy.command('delete').description('Delete an ACL policy').argument('<name>')).action(run('deleting ACL policy', async (opts, name) => {
      await apiClient(ctx, opts).delete(`/v1/acl/policy/${encodeURIComponent(name!)}`);
      ctx.stdout.write(`Successfully deleted "${name}" ACL policy!\n`);
      return ExitCode.Ok;
    }));

    // ---- tokens ----
    const token = acl.command('token').description('Interact with ACL tokens');
    const tokenFlags = (c: Command): Command =>
      addApiFlags(c)
        .option('--name <name>', 'the token\'s name')
        .option('--type <type>', 'client or management')
        .option('--policy <name>', 'a policy of the token (repeatable)', collect, [])
        .option('--role-id <id>', 'a role of the token, by ID (repeatable)', collect, [])
        .option('--role-name <name>', 'a role of the token, by name (repeatable)', collect, [])
        .option('--global', 'replicate the token to every region')
        .option('--ttl <duration>', 'the token expires after this long');
    tokenFlags(token.command('create').description('Create an ACL token')).action(run('creating token', async (opts) => {
      const { body } = await apiClient(ctx, opts).post<AclToken>('/v1/acl/token', tokenBody(opts, true));
      return show(ctx, opts, body, formatToken);
    }));
    tokenFlags(token.command('update').description('Update an ACL token').argument('<accessor>')).action(run('updating token', async (opts, accessor) => {
      const api = apiClient(ctx, opts);
      const { body: current } = await api.get<AclToken>(`/v1/acl/token/${encodeURIComponent(accessor!)}`);
      const { body } = await api.post<AclToken>(`/v1/acl/token/${encodeURIComponent(accessor!)}`, { ...current, ...tokenBody(opts, false) });
      return show(ctx, opts, body, formatToken);
    }));
    addApiFlags(token.command('list').description('List ACL tokens')).action(run('listing tokens', async (opts) => {
      const { body } = await apiClient(ctx, opts).get<AclTokenListStub[]>('/v1/acl/tokens');
      return show(ctx, opts, body, formatTokenList);
    }));
    addApiFlags(token.command('info').description('Show an ACL token').argument('<accessor>')).action(run('fetching token', async (opts, accessor) => {
      const { body } = await apiClient(ctx, opts).get<AclToken>(`/v1/acl/token/${encodeURIComponent(accessor!)}`);
      return show(ctx, opts, body, formatToken);
    }));
    addApiFlags(token.command('self').description('Show the token in use')).action(run('fetching self token', async (opts) => {
      const { body } = await apiClient(ctx, opts).get<AclToken>('/v1/acl/token/self');
      return show(ctx, opts, body, formatToken);
    }));
    addApiFlags(token.command('delete').description('Delete an ACL token').argument('<accessor>')).action(run('deleting token', async (opts, accessor) => {
      await apiClient(ctx, opts).delete(`/v1/acl/token/${encodeURIComponent(accessor!)}`);
      ctx.stdout.write(`Token ${accessor} successfully deleted\n`);
      return ExitCode.Ok;
    }));

    // ---- roles ----
    const role = acl.command('role').description('Interact with ACL roles');
    const roleFlags = (c: Command): Command =>
      addApiFlags(c).option('--name <name>', 'the role\'s name').option('--description <text>', 'the role\'s description').option('--policy <name>', 'a policy of the role (repeatable)', collect, []);
    roleFlags(role.command('create').description('Create an ACL role')).action(run('creating ACL role', async (opts) => {
      const { body } = await apiClient(ctx, opts).post<AclRole>('/v1/acl/role', roleBody(opts));
      return show(ctx, opts, body, formatRole);
    }));
    roleFlags(role.command('update').description('Update an ACL role').argument('<id>')).action(run('updating ACL role', async (opts, id) => {
      const { body } = await apiClient(ctx, opts).post<AclRole>(`/v1/acl/role/${encodeURIComponent(id!)}`, roleBody(opts));
      return show(ctx, opts, body, formatRole);
    }));
    addApiFlags(role.command('list').description('List ACL roles')).action(run('listing ACL roles', async (opts) => {
      const { body } = await apiClient(ctx, opts).get<AclRole[]>('/v1/acl/roles');
      return show(ctx, opts, body, formatRoleList);
    }));
    addApiFlags(role.command('info').description('Show an ACL role').argument('<id>').option('--by-name', 'look the role up by name')).action(run('reading ACL role', async (opts, id) => {
      const path = opts['byName'] ? `/v1/acl/role/name/${encodeURIComponent(id!)}` : `/v1/acl/role/${encodeURIComponent(id!)}`;
      const { body } = await apiClient(ctx, opts).get<AclRole>(path);
      return show(ctx, opts, body, formatRole);
    }));
    addApiFlags(role.command('delete').description('Delete an ACL role').argument('<id>')).action(run('deleting ACL role', async (opts, id) => {
      await apiClient(ctx, opts).delete(`/v1/acl/role/${encodeURIComponent(id!)}`);
      ctx.stdout.write(`ACL role ${id} successfully deleted\n`);
      return ExitCode.Ok;
    }));
  },
};
