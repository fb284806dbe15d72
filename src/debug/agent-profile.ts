/**
 * The profiles an agent serves at /v1/agent/pprof/<name>, Nomad's names mapped to what Node.js
 * can give (each opens in Chrome DevTools or a text editor):
 *
 *   name          Nomad (Go)                 Caravan (Node.js)                       file
 *   profile       CPU profile, ?seconds      CPU profile, ?seconds                   profile.cpuprofile
 *   trace         execution trace, ?seconds  Node/V8 trace events, ?seconds          trace.json
 *   heap          heap profile               heap snapshot                           heap.heapsnapshot
 *   allocs        allocation profile         sampling heap profile, ?seconds         allocs.heapprofile
 *   goroutine     goroutine stacks           diagnostic report (debug=0, JSON),      goroutine.json
 *                                            event-loop summary (debug=1, text),     goroutine-debug1.txt
 *                                            every libuv handle (debug=2, text)      goroutine-debug2.txt
 *   threadcreate  thread creation stacks     worker threads and libuv's pool         threadcreate.json
 *   cmdline       the command line           the command line (secrets redacted)     cmdline
 *
 * Anything else is Nomad's 404 "Unknown profile: <name>".
 */
import { Readable } from 'node:stream';
import { HttpError } from '../http/http-errors.js';
import { cpuProfile, heapSnapshot, samplingHeapProfile, traceEvents } from './inspector-profiles.js';
import { diagnosticReport, eventLoopHandles, eventLoopSummary, redactArgv, threadState } from './event-loop-state.js';

/** A profile ready to send: its file name (Content-Disposition), content type and body. */
export interface AgentProfile {
  filename: string;
  contentType: string;
  body: string | Readable;
}

/** How a profile is taken: Nomad's `seconds` (default 1) and `debug` query parameters. */
export interface ProfileRequest {
  seconds: number;
  debug: number;
  signal: AbortSignal;
}

/** The profile names served. */
export const PROFILE_NAMES = ['profile', 'trace', 'heap', 'allocs', 'goroutine', 'threadcreate', 'cmdline'] as const;
export type ProfileName = (typeof PROFILE_NAMES)[number];

function isProfileName(name: string): name is ProfileName {
  return (PROFILE_NAMES as readonly string[]).includes(name);
}

const JSON_FILE = 'application/octet-stream';

/** Takes profile `name`; a 404 HttpError ("Unknown profile: …") for a name Caravan has no equivalent of. */
export async function takeAgentProfile(name: string, req: ProfileRequest): Promise<AgentProfile> {
  if (!isProfileName(name)) throw new HttpError('HTTP_UNKNOWN_PROFILE', { name });
  switch (name) {
    case 'profile':
      return { filename: 'profile.cpuprofile', contentType: JSON_FILE, body: await cpuProfile(req.seconds, req.signal) };
    case 'trace':
      return { filename: 'trace.json', contentType: JSON_FILE, body: await traceEvents(req.seconds, req.signal) };
    case 'heap':
      return { filename: 'heap.heapsnapshot', contentType: JSON_FILE, body: heapSnapshot() };
    case 'allocs':
      return { filename: 'allocs.heapprofile', contentType: JSON_FILE, body: await samplingHeapProfile(req.seconds, req.signal) };
    case 'goroutine':
      if (req.debug === 1) return { filename: 'goroutine-debug1.txt', contentType: 'text/plain; charset=utf-8', body: eventLoopSummary() };
      if (req.debug >= 2) return { filename: 'goroutine-debug2.txt', contentType: 'text/plain; charset=utf-8', body: eventLoopHandles() };
      return { filename: 'goroutine.json', contentType: JSON_FILE, body: JSON.stringify(diagnosticReport()) };
    case 'threadcreate':
      return { filename: 'threadcreate.json', contentType: JSON_FILE, body: JSON.stringify(threadState()) };
    case 'cmdline':
      return { filename: 'cmdline', contentType: 'text/plain; charset=utf-8', body: redactArgv(process.argv).join('\x00') };
    default: {
      const never: never = name;
      throw new HttpError('HTTP_UNKNOWN_PROFILE', { name: String(never) });
    }
  }
}
