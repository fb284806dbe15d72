/**
 * `caravan monitor [-log-level L] [-json]`: follows an agent's log lines, as `nomad monitor`
 * (GET /v1/agent/monitor, frames decoded as they arrive) until interrupted.
 */
import type { Command } from 'commander';
import { JsonFrameDecoder } from '../../http/json-frame-decoder.js';
import { ExitCode, type CliContext } from '../cli-context.js';
import { addApiFlags, apiClient, runApiCommand, type ApiFlags } from './api-command.js';

/** Decodes back-to-back JSON frames `{"Data": <base64>}` from chunks; returns the text of complete frames. */
export class FrameDecoder {
  private frames = new JsonFrameDecoder();

  push(chunk: string): string[] {
    const out: string[] = [];
    for (const frame of this.frames.pushParsed<{ Data?: string }>(chunk)) {
      if (frame.Data) out.push(Buffer.from(frame.Data, 'base64').toString('utf8'));
    }
    return out;
  }
}

interface ExportFlags extends ApiFlags {
  nodeId?: string;
  serverId?: string;
  serviceName?: string;
  logsSince: string;
  follow?: boolean;
  onDisk?: boolean;
}

/**
 * `caravan monitor export [-on-disk] [-service-name S [-logs-since D] [-follow]] [-node-id N | -server-id S]`,
 * as Nomad's: prints an agent's past log (its log_file, or its systemd journal) from
 * /v1/agent/monitor/export; exit 1 with Nomad's messages when refused or when nothing came back.
 */
function registerMonitorExport(monitor: Command, ctx: CliContext): void {
  addApiFlags(
    monitor
      .command('export')
      .description("Export an agent's log file or journal")
      .option('--node-id <id>', 'the client node whose agent to ask')
      .option('--server-id <name>', 'the server to ask (a name, or "leader")')
      .option('--service-name <unit>', 'the systemd unit of the agent (its journal is exported)')
      .option('--logs-since <duration>', 'how far back to read the journal', '72h')
      .option('--follow', 'keep streaming the journal until interrupted')
      .option('--on-disk', "export the agent's log_file"),
  ).action(async (opts: ExportFlags) => {
    const fail = (msg: string): void => {
      ctx.stderr.write(`==> Error starting monitor: \n${msg}\n`);
      ctx.exitCode = ExitCode.Error;
    };
    if (opts.serviceName && opts.onDisk) return fail('Cannot target journalctl and nomad log file simultaneously');
    const api = apiClient(ctx, opts);
    const url = api.url('/v1/agent/monitor/export', {
      follow: String(opts.follow === true),
      logs_since: opts.logsSince,
      node_id: opts.nodeId,
      on_disk: String(opts.onDisk === true),
      server_id: opts.serverId,
      service_name: opts.serviceName,
    });
    const headers: Record<string, string> = api.opts.token ? { 'X-Nomad-Token': api.opts.token } : {};
    let res: Response;
    try {
      res = await api.fetchFn(url, { headers });
    } catch (err) {
      return fail(`cannot reach ${api.opts.address}: ${(err as Error).message}`);
    }
    if (!res.ok || !res.body) return fail(`Unexpected response code: ${res.status} (${(await res.text()).trim()})`);
    const decoder = new FrameDecoder();
    const text = new TextDecoder();
    let written = 0;
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      for (const line of decoder.push(text.decode(chunk, { stream: true }))) {
        ctx.stdout.write(line);
        written += line.length;
      }
    }
    if (written === 0) return fail('Returned no data or errors, check your log_file configuration or service name');
    ctx.exitCode = ExitCode.Ok;
  });
}

/** Registers `monitor` and `monitor export`. */
export const monitorCommand = {
  register(program: Command, ctx: CliContext): void {
    const monitor = program.command('monitor');
    registerMonitorExport(monitor, ctx);
    addApiFlags(
      monitor.description("Stream an agent's logs").option('--log-level <level>', 'trace, debug, info, warn or error', 'info'),
    ).action(async (opts: ApiFlags & { logLevel: string }) => {
      await runApiCommand(ctx, 'monitoring the agent', async () => {
        const api = apiClient(ctx, opts);
        const url = api.url('/v1/agent/monitor', { log_level: opts.logLevel, log_json: opts.json ? 'true' : undefined });
        const headers: Record<string, string> = api.opts.token ? { 'X-Nomad-Token': api.opts.token } : {};
        const res = await fetch(url, { headers });
        if (!res.ok || !res.body) {
          ctx.stderr.write(`Error starting monitor: Unexpected response code: ${res.status} (${(await res.text()).trim()})\n`);
          return ExitCode.Error;
        }
        const decoder = new FrameDecoder();
        const text = new TextDecoder();
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          for (const line of decoder.push(text.decode(chunk, { stream: true }))) ctx.stdout.write(line);
        }
        return ExitCode.Ok;
      });
    });
  },
};
