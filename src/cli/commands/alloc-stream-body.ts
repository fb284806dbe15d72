/**
 * Reading a streaming HTTP answer of an agent (logs, fs stream) as it arrives, for the alloc
 * commands: chunks are handed over as they come, and aborting the signal ends the read.
 */
import { ApiError } from '../api-client.js';

/** GETs `url` and calls `onChunk` for each piece of the body; resolves at its end or on abort. */
export async function readStreamingBody(
  url: string,
  token: string | undefined,
  onChunk: (chunk: Buffer) => void,
  signal?: AbortSignal,
  fetchFn: typeof fetch = fetch,
): Promise<void> {
  const headers: Record<string, string> = {};
  if (token) headers['X-Nomad-Token'] = token;
  let res: Response;
  try {
    res = await fetchFn(url, { headers, ...(signal ? { signal } : {}) });
  } catch (err) {
    if (signal?.aborted) return;
    throw new ApiError(0, `Error querying ${url}: ${(err as Error).message}`, 'GET', new URL(url).pathname, { cause: err });
  }
  if (!res.ok) {
    const text = await res.text();
    throw new ApiError(res.status, `Unexpected response code: ${res.status} (${text.trim()})`, 'GET', new URL(url).pathname);
  }
  if (!res.body) return;
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      onChunk(Buffer.from(value));
    }
  } catch (err) {
    if (signal?.aborted) return;
    throw err;
  }
}
