/**
 * What a Node.js process has instead of goroutines and OS threads to show in a debug bundle:
 * its event loop's pending work (libuv handles and requests, by kind), how busy the loop is,
 * the JavaScript stack, and its worker threads — from Node's diagnostic report, with the
 * environment left out and secret-looking command-line values redacted, since a bundle is
 * meant to be attached to a bug report.
 */
import { performance } from 'node:perf_hooks';

/** Command-line flags whose next argument (or `=value`) is a secret. */
const SECRET_FLAGS = /^--?(client-intro-token|token|.*secret.*|.*password.*)$/i;

/** `argv` with the values of secret-bearing flags replaced by "<redacted>". */
export function redactArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf('=');
    if (a.startsWith('-') && eq > 0 && SECRET_FLAGS.test(a.slice(0, eq))) {
      out.push(`${a.slice(0, eq)}=<redacted>`);
    } else if (SECRET_FLAGS.test(a) && i + 1 < argv.length) {
      out.push(a, '<redacted>');
      i++;
    } else {
      out.push(a);
    }
  }
  return out;
}

/** Node's diagnostic report of this process, without the environment and with the command line redacted. */
export function diagnosticReport(): Record<string, unknown> {
  const report = process.report.getReport() as unknown as Record<string, unknown>;
  const { environmentVariables: _env, ...rest } = report;
  const header = rest['header'] as Record<string, unknown> | undefined;
  if (header && Array.isArray(header['commandLine'])) header['commandLine'] = redactArgv(header['commandLine'] as string[]);
  return rest;
}

/** One libuv handle as the report lists it. */
interface UvHandle {
  type: string;
  is_active?: boolean;
  is_referenced?: boolean;
  [k: string]: unknown;
}

/**
 * A text summary of the event loop (the `goroutine?debug=1` of a Caravan agent): how busy the
 * loop has been, the count of active resources by kind, and the JavaScript stack now.
 */
export function eventLoopSummary(): string {
  const elu = performance.eventLoopUtilization();
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  const report = diagnosticReport();
  const stack = (report['javascriptStack'] as { message?: string; stack?: string[] } | undefined)?.stack ?? [];
  const lines = [
    `event loop utilization: ${(elu.utilization * 100).toFixed(1)}% (active ${elu.active.toFixed(0)} ms, idle ${elu.idle.toFixed(0)} ms since start)`,
    `uptime: ${process.uptime().toFixed(1)} s, pid ${process.pid}, node ${process.version}`,
    `memory: ${JSON.stringify(process.memoryUsage())}`,
    '',
    `active resources: ${[...counts.values()].reduce((a, b) => a + b, 0)}`,
    ...[...counts.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([kind, n]) => `  ${String(n).padStart(5)} ${kind}`),
    '',
    'javascript stack:',
    ...stack.map((l) => `  ${l.trim()}`),
    '',
  ];
  return lines.join('\n');
}

/** Every libuv handle of the loop, one a line (the `goroutine?debug=2` of a Caravan agent). */
export function eventLoopHandles(): string {
  const handles = (diagnosticReport()['libuv'] as UvHandle[] | undefined) ?? [];
  const lines = handles.map((h) => {
    const { type, is_active, is_referenced, ...rest } = h;
    const flags = `${is_active ? 'active' : 'inactive'}${is_referenced ? ', referenced' : ''}`;
    const details = Object.entries(rest).map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(' ');
    return `${type} (${flags})${details ? ` ${details}` : ''}`;
  });
  return `${handles.length} libuv handles\n\n${lines.join('\n')}\n`;
}

/** The threads besides the main one (the `threadcreate` of a Caravan agent): worker threads and libuv's pool. */
export function threadState(): Record<string, unknown> {
  const report = diagnosticReport();
  return {
    workers: report['workers'] ?? [],
    libuvThreadpoolSize: Number(process.env['UV_THREADPOOL_SIZE'] ?? 4),
    uvthreadResourceUsage: report['uvthreadResourceUsage'] ?? null,
  };
}
