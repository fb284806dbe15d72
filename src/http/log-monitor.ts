/**
 * Live access to the agent's own log lines, for GET /v1/agent/monitor: a subscriber is added as
 * one more stream of the logger's pino multistream (the agent command builds its logger on one)
 * and removed when the request ends. Lines below `level` are not delivered; the logger's own
 * level still applies first (the agent command produces debug and up whatever it writes to
 * stderr, so a monitor may ask for debug; trace only when the agent runs at trace).
 */
import { symbols, type Level, type Logger } from 'pino';

interface Multistream {
  add(dest: { level: Level; stream: { write(line: string): void } }): Multistream;
  remove(id: number): Multistream;
  lastId: number;
}

function multistreamOf(logger: Logger | undefined): Multistream | undefined {
  const stream = logger ? (logger as unknown as Record<symbol, unknown>)[symbols.streamSym] : undefined;
  const m = stream as Partial<Multistream> | undefined;
  return m && typeof m.add === 'function' && typeof m.remove === 'function' ? (m as Multistream) : undefined;
}

/** Whether the logger's lines can be followed (it writes to a multistream). */
export function canMonitor(logger: Logger | undefined): boolean {
  return multistreamOf(logger) !== undefined;
}

/** Delivers each log line (pino's JSON, newline-terminated) at `level` or above to `onLine` until the returned function is called. */
export function subscribeLogs(logger: Logger | undefined, level: Level, onLine: (line: string) => void): () => void {
  const m = multistreamOf(logger);
  if (!m) return () => undefined;
  m.add({ level, stream: { write: (line: string) => onLine(line) } });
  const id = m.lastId;
  return () => void m.remove(id);
}

const LEVEL_NAMES: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

/**
 * A pino JSON line in Nomad's (hclog's) text format:
 * `2026-01-02T03:04:05.000Z [INFO]  component: message: key=value key2="with space"`. A value
 * that would not read back as one word is quoted; an error object shows as `error="<message>"`.
 * A line that is not JSON passes through unchanged.
 */
export function formatLogLine(line: string): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith('\n') ? line : `${line}\n`;
  }
  const { level, time, msg, component, pid: _pid, hostname: _hostname, agent: _agent, ...rest } = o;
  const when = typeof time === 'number' ? new Date(time).toISOString() : '';
  const name = `[${LEVEL_NAMES[level as number] ?? String(level)}]`.padEnd(7);
  const where = typeof component === 'string' ? `${component}: ` : '';
  const extra = Object.entries(rest).map(([k, v]) => logField(k, v)).join(' ');
  return `${when} ${name} ${where}${String(msg ?? '')}${extra ? `: ${extra}` : ''}\n`;
}

/** One `key=value` of a text line, as hclog writes it (strconv.Quote when needed). */
function logField(key: string, value: unknown): string {
  if (key === 'err' && typeof value === 'object' && value !== null && typeof (value as { message?: unknown }).message === 'string') {
    return `error=${quoteIfNeeded((value as { message: string }).message)}`;
  }
  return `${key}=${quoteIfNeeded(typeof value === 'string' ? value : JSON.stringify(value))}`;
}

function quoteIfNeeded(s: string): string {
  return s === '' || /[\s"=\\]/.test(s) || /[^\x20-\x7e]/.test(s) ? JSON.stringify(s) : s;
}
