/** `caravan version`: prints the program's version (and, with -json, a Nomad-like object). */
import type { Command } from 'commander';
import { CARAVAN_VERSION } from '../../structs/version.js';
import type { CliContext } from '../cli-context.js';
import type { CommandModule } from '../command-registry.js';

/** Registers `caravan version [-json]`. */
export const versionCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    program
      .command('version')
      .description('Print the Caravan version')
      .option('--json', 'output as JSON')
      .action((opts: { json?: boolean }) => {
        const version = CARAVAN_VERSION;
        if (opts.json) {
          ctx.stdout.write(`${JSON.stringify({ Name: 'caravan', Version: version }, null, 2)}\n`);
        } else {
          ctx.stdout.write(`Caravan v${version}\n`);
        }
        ctx.exitCode = 0;
      });
  },
};
