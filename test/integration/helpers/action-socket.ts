/**
 * One task action over `GET /v1/job/:job/action` (the websocket `nomad action` opens), stdin
 * closed at once: its output, its exit code (from the exit frame) and how the socket closed.
 */
import { WebSocket } from 'ws';

/** The outcome of one action session. */
export interface ActionOnce {
  stdout: string;
  stderr: string;
  /** The exit code of the exit frame; undefined when the session ended without one (refused). */
  exitCode: number | undefined;
  /** The websocket close code and reason. */
  code: number;
  reason: string;
}

/**
 * Runs action `query.action` of job `jobId` in `query.allocID`'s `query.task`; every pair of
 * `query` is sent as a query parameter as written (a hostile test adds its own). Rejects after 20 s.
 */
export function actionOnce(address: string, jobId: string, query: Record<string, string>, headers: Record<string, string> = {}): Promise<ActionOnce> {
  const q = new URLSearchParams({ tty: 'false', ...query });
  const ws = new WebSocket(`${address.replace(/^http/, 'ws')}/v1/job/${encodeURIComponent(jobId)}/action?${q}`, { headers });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    let exitCode: number | undefined;
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error('action timed out'));
    }, 20_000);
    ws.on('open', () => ws.send(JSON.stringify({ stdin: { close: true } })));
    ws.on('message', (d) => {
      const f = JSON.parse(String(d)) as { stdout?: { data?: string }; stderr?: { data?: string }; exited?: boolean; result?: { exit_code?: number } };
      if (f.stdout?.data) stdout += Buffer.from(f.stdout.data, 'base64').toString('utf8');
      if (f.stderr?.data) stderr += Buffer.from(f.stderr.data, 'base64').toString('utf8');
      if (f.exited) exitCode = f.result?.exit_code ?? 0;
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, exitCode, code, reason: String(reason) });
    });
    ws.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}
