/** HTTP over a Unix socket (the Task API's secrets/api.sock), as a task's curl --unix-socket would call it. */
import { request } from 'node:http';

/** One answer: status and body text. */
export interface UnixAnswer {
  status: number;
  text: string;
}

/** `method path` on the agent API behind `socketPath`, with `token` in X-Nomad-Token (none: no header). */
export function callUnix(socketPath: string, method: string, path: string, token?: string, body?: unknown): Promise<UnixAnswer> {
  return new Promise((resolve, reject) => {
    const req = request({ socketPath, method, path, headers: token ? { 'X-Nomad-Token': token } : {} }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}
