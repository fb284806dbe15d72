/**
 * `caravan job init [-short] [-json] [FILE]`: writes an example job to start from
 * (example.nomad.hcl, or .json with -json), refusing to overwrite a file, as Nomad's `job init`.
 */
import { access, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { parseJobspec } from '../../jobspec/index.js';
import type { CliContext } from '../cli-context.js';
import { ExitCode } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';

const SHORT_EXAMPLE = `job "example" {
  datacenters = ["*"]

  group "web" {
    network {
      port "http" {}
    }

    task "server" {
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "\${NOMAD_PORT_http}"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

const LONG_EXAMPLE = `# An example job: a small web server on a dynamic port.
# Run it with \`caravan job run example.nomad.hcl\`; see what a change would do with
# \`caravan job plan example.nomad.hcl\`. Every block is documented in Nomad's jobspec reference.
job "example" {
  # Where the job may run: "*" means every datacenter.
  datacenters = ["*"]

  # service jobs run until stopped; batch and sysbatch run to completion; system runs on every node.
  type = "service"

  # How a new version replaces the running one.
  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
    auto_revert      = false
  }

  group "web" {
    # How many allocations of this group to run.
    count = 1

    network {
      # A port the scheduler picks; the task reads it from NOMAD_PORT_http.
      port "http" {}
    }

    # Restarts on the same node before the allocation counts as failed.
    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    task "server" {
      # raw_exec runs a host process; exec isolates it; docker runs an image.
      driver = "raw_exec"

      config {
        command = "/usr/bin/python3"
        args    = ["-m", "http.server", "\${NOMAD_PORT_http}"]
      }

      # What the task may use: MHz of CPU and MiB of memory.
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

export const jobInitCommand: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    commandGroup(program, 'job')
      .command('init')
      .description('Create an example job file')
      .argument('[file]', 'where to write it')
      .option('--short', 'without the comments')
      .option('--json', 'write the job as API JSON')
      .action(async (file: string | undefined, opts: { short?: boolean; json?: boolean }) => {
        const name = file ?? (opts.json ? 'example.nomad.json' : 'example.nomad.hcl');
        const path = resolve(ctx.cwd, name);
        const exists = await access(path).then(
          () => true,
          () => false,
        );
        if (exists) {
          ctx.stderr.write(`Job '${name}' already exists\n`);
          ctx.exitCode = ExitCode.Error;
          return;
        }
        const hcl = opts.short ? SHORT_EXAMPLE : LONG_EXAMPLE;
        const text = opts.json ? `${JSON.stringify({ Job: await parseJobspec(hcl) }, null, 2)}\n` : hcl;
        await writeFile(path, text, { flag: 'wx' });
        ctx.stdout.write(`Example job file written to ${name}\n`);
        ctx.exitCode = ExitCode.Ok;
      });
  },
};
