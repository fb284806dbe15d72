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

/** Registers `monitor`. */
export const monitorCommand = {
  register(program: Command, ctx: CliContext): void {
    addApiFlags(
      program.command('monitor').description("Stream an agent's logs").option('--log-level <level>', 'trace, debug, info, warn or error', 'info'),
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
