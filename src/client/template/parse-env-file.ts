/**
 * Parsing of a rendered `env = true` template: dotenv lines (`KEY=value`, optional `export `,
 * single/double quoted values, `#` comments, blank lines) into environment variables, as Nomad
 * reads such templates into the task's environment.
 */
import { CaravanError } from '../../structs/caravan-error.js';

/** A line of an env template that is not `KEY=value`; names the line. */
export class EnvFileParseError extends CaravanError<'TEMPLATE_ENV_PARSE'> {
  constructor(
    readonly line: number,
    detail: string,
  ) {
    super('TEMPLATE_ENV_PARSE', { line, reason: detail });
    this.name = 'EnvFileParseError';
  }
}

function unquote(value: string, line: number): string {
  const v = value.trim();
  if (v.length >= 2 && v.startsWith("'") && v.endsWith("'")) return v.slice(1, -1);
  if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) {
    return v.slice(1, -1).replace(/\\(.)/g, (_m, c: string) => (c === 'n' ? '\n' : c === 't' ? '\t' : c));
  }
  if (v.startsWith('"') || v.startsWith("'")) throw new EnvFileParseError(line, 'unterminated quoted value');
  // An unquoted value ends at an inline comment.
  const hash = v.search(/\s#/);
  return hash >= 0 ? v.slice(0, hash).trimEnd() : v;
}

/** Parses dotenv text into a map; later keys win. Throws EnvFileParseError on a malformed line. */
export function parseEnvFile(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    let l = lines[i]!.trim();
    if (l === '' || l.startsWith('#')) continue;
    if (l.startsWith('export ')) l = l.slice('export '.length).trimStart();
    const eq = l.indexOf('=');
    if (eq <= 0) throw new EnvFileParseError(i + 1, `expected KEY=value, got ${JSON.stringify(lines[i])}`);
    const key = l.slice(0, eq).trim();
    if (!/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key)) throw new EnvFileParseError(i + 1, `invalid variable name ${JSON.stringify(key)}`);
    out[key] = unquote(l.slice(eq + 1), i + 1);
  }
  return out;
}
