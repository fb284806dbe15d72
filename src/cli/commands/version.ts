/** `caravan version`: prints the program's version (and, with -json, a Nomad-like object). */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import type { CommandModule } from '../command-registry.js';

/** The package version, read once from package.json next to dist/ or src/. */
export function caravanVersion(): string {
  for (const rel of ['../../../package.json', '../../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'caravan' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // try the next candidate location
    }
  }
  return '0.0.0';
}

/** Registers `caravan version [-json]`. */
export const versionCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    program
      .command('version')
      .description('Print the Caravan version')
      .option('--json', 'output as JSON')
      .action((opts: { json?: boolean }) => {
        const version = caravanVersion();
        if (opts.json) {
          ctx.stdout.write(`${JSON.stringify({ Name: 'caravan', Version: version }, null, 2)}\n`);
        } else {
          ctx.stdout.write(`Caravan v${version}\n`);
        }
        ctx.exitCode = 0;
      });
  },
};
