/**
 * How command modules plug into the `caravan` program. Each module under src/cli/commands/
 * exports a `CommandModule`; src/cli/main.ts lists them in one array. Sub-commands such as
 * `job run` share their parent (`job`) through `commandGroup`, so modules never depend on each
 * other's registration order.
 */
import { Command } from 'commander';
import type { CliContext } from './cli-context.js';

/** One CLI command (or a few closely related ones) contributed by a module. */
export interface CommandModule {
  /** Adds the command to `program`; actions report through `ctx` (stdout, stderr, exitCode). */
  register(program: Command, ctx: CliContext): void;
}

const GROUP_DESCRIPTIONS: Record<string, string> = {
  job: 'Interact with jobs',
  node: 'Interact with nodes',
  alloc: 'Interact with allocations',
  eval: 'Interact with evaluations',
  server: 'Interact with servers',
  operator: 'Cluster operations',
  acl: 'Interact with ACL policies and tokens',
  deployment: 'Interact with deployments',
  system: 'Interact with the system API',
  namespace: 'Interact with namespaces',
  scaling: 'Interact with Nomad scaling endpoints',
  service: 'Interact with registered services',
  volume: 'Interact with volumes',
};

/**
 * Returns the parent command `name` (e.g. "job") of `program`, creating it on first use;
 * idempotent, so every module registering a `job …` sub-command can call it.
 */
export function commandGroup(program: Command, name: string): Command {
  const existing = program.commands.find((c) => c.name() === name);
  if (existing) return existing;
  const group = new Command(name).description(GROUP_DESCRIPTIONS[name] ?? `${name} commands`);
  // addCommand (unlike .command) does not copy exitOverride/output settings; do it by hand.
  group.copyInheritedSettings(program);
  program.addCommand(group);
  return group;
}
