/**
 * A renderer for the subset of Go's text/template syntax that Nomad templates can use without
 * Consul or Vault: literal text, actions `{{ … }}` with custom delimiters, `{{-`/`-}}` trim
 * markers, comments, string literals, and pipelines of the pure functions `env`, `toUpper`,
 * `toLower`, `trimSpace`. Everything else (Consul/Vault/Nomad lookups, `.Fields`, control
 * structures, variables) is rejected with a TemplateRenderError naming it, never rendered as junk.
 */
import { CaravanError } from '../../structs/caravan-error.js';

/** Why a template could not be rendered; `message` names the offending function or syntax. */
export class TemplateRenderError extends CaravanError<'TEMPLATE_RENDER'> {
  constructor(reason: string) {
    super('TEMPLATE_RENDER', { reason });
    this.name = 'TemplateRenderError';
  }
}

/** Inputs of one render. */
export interface RenderOptions {
  leftDelim?: string;
  rightDelim?: string;
  /** The task's environment, read by `env "NAME"` (unset names render as ""). */
  env: Readonly<Record<string, string>>;
}

type Token =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: string }
  | { kind: 'ident'; value: string }
  | { kind: 'field'; value: string }
  | { kind: 'pipe' }
  | { kind: 'other'; value: string };

/** Go template control keywords: all out of scope. */
const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue', 'nil']);

type Fn = (args: string[]) => string;

function arity(name: string, n: number, fn: Fn): Fn {
  return (args) => {
    if (args.length !== n) throw new TemplateRenderError(`wrong number of args for ${name}: want ${n} got ${args.length}`);
    return fn(args);
  };
}

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

/** Reads a double-quoted Go string literal starting at `i`; returns its value and the end index. */
function readQuoted(src: string, i: number): { value: string; end: number } {
  let j = i + 1;
  let raw = '"';
  while (j < src.length && src[j] !== '"') {
    if (src[j] === '\n') break;
    if (src[j] === '\\') {
      raw += src[j]! + (src[j + 1] ?? '');
      j += 2;
      continue;
    }
    raw += src[j];
    j++;
  }
  if (src[j] !== '"') throw new TemplateRenderError('unterminated quoted string');
  raw += '"';
  try {
    return { value: JSON.parse(raw) as string, end: j + 1 };
  } catch {
    throw new TemplateRenderError(`invalid string literal ${raw}`);
  }
}

function tokenize(body: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (isSpace(c)) {
      i++;
    } else if (c === '"') {
      const q = readQuoted(body, i);
      out.push({ kind: 'string', value: q.value });
      i = q.end;
    } else if (c === '`') {
      const end = body.indexOf('`', i + 1);
      if (end < 0) throw new TemplateRenderError('unterminated raw string');
      out.push({ kind: 'string', value: body.slice(i + 1, end) });
      i = end + 1;
    } else if (c === '|') {
      out.push({ kind: 'pipe' });
      i++;
    } else {
      const m = /^(?:\.[A-Za-z_][\w.]*|\.|[A-Za-z_]\w*|-?\d+(?:\.\d+)?)/.exec(body.slice(i));
      if (!m) {
        out.push({ kind: 'other', value: c });
        i++;
        continue;
      }
      const t = m[0];
      out.push(t.startsWith('.') ? { kind: 'field', value: t } : /^[-\d]/.test(t) ? { kind: 'number', value: t } : { kind: 'ident', value: t });
      i += t.length;
    }
  }
  return out;
}

/** Evaluates one action body (already stripped of delimiters and trim markers). */
function evalAction(body: string, fns: Record<string, Fn>): string {
  const trimmed = body.trim();
  if (trimmed.startsWith('/*')) {
    if (!trimmed.endsWith('*/')) throw new TemplateRenderError('unclosed comment');
    return '';
  }
  const tokens = tokenize(trimmed);
  if (tokens.length === 0) throw new TemplateRenderError('missing value for command');
  const commands: Token[][] = [[]];
  for (const t of tokens) {
    if (t.kind === 'pipe') commands.push([]);
    else commands[commands.length - 1]!.push(t);
  }
  let piped: string | undefined;
  for (const cmd of commands) {
    const head = cmd[0];
    if (!head) throw new TemplateRenderError('missing command in pipeline');
    if (head.kind === 'ident' && KEYWORDS.has(head.value)) throw new TemplateRenderError(`unsupported action ${JSON.stringify(head.value)}`);
    const args: string[] = [];
    for (const t of cmd.slice(1)) {
      if (t.kind === 'string' || t.kind === 'number') args.push(t.value);
      else if (t.kind === 'field') throw new TemplateRenderError(`unsupported field reference ${JSON.stringify(t.value)}`);
      else if (t.kind === 'ident') throw new TemplateRenderError(`unsupported function ${JSON.stringify(t.value)}`);
      else if (t.kind === 'other') throw new TemplateRenderError(`unsupported syntax ${JSON.stringify(t.value)}`);
    }
    if (piped !== undefined) args.push(piped);
    switch (head.kind) {
      case 'string':
      case 'number':
        if (cmd.length > 1 || piped !== undefined) throw new TemplateRenderError(`can't give argument to non-function ${JSON.stringify(head.value)}`);
        piped = head.value;
        break;
      case 'ident': {
        const fn = Object.prototype.hasOwnProperty.call(fns, head.value) ? fns[head.value] : undefined;
        if (!fn) throw new TemplateRenderError(`unsupported function ${JSON.stringify(head.value)}`);
        piped = fn(args);
        break;
      }
      case 'field':
        throw new TemplateRenderError(`unsupported field reference ${JSON.stringify(head.value)}`);
      case 'other':
        throw new TemplateRenderError(`unsupported syntax ${JSON.stringify(head.value)}`);
      case 'pipe':
        throw new TemplateRenderError('missing command in pipeline');
      default: {
        const never: never = head;
        return never;
      }
    }
  }
  return piped ?? '';
}

/** Index of the right delimiter closing an action that starts at `from`, skipping quoted strings. */
function findClose(src: string, from: number, right: string): number {
  let i = from;
  while (i < src.length) {
    if (src.startsWith(right, i)) return i;
    const c = src[i];
    if (c === '"') {
      i = readQuoted(src, i).end;
    } else if (c === '`') {
      const end = src.indexOf('`', i + 1);
      if (end < 0) throw new TemplateRenderError('unterminated raw string');
      i = end + 1;
    } else {
      i++;
    }
  }
  return -1;
}

/** Renders a template; throws TemplateRenderError for anything outside the supported subset. */
export function renderTemplate(src: string, opts: RenderOptions): string {
  const left = opts.leftDelim || '{{';
  const right = opts.rightDelim || '}}';
  const env = opts.env;
  const fns: Record<string, Fn> = {
    env: arity('env', 1, ([name]) => (Object.prototype.hasOwnProperty.call(env, name!) ? env[name!]! : '')),
    toUpper: arity('toUpper', 1, ([s]) => s!.toUpperCase()),
    toLower: arity('toLower', 1, ([s]) => s!.toLowerCase()),
    trimSpace: arity('trimSpace', 1, ([s]) => s!.trim()),
  };
  let out = '';
  let pos = 0;
  let trimNext = false;
  for (;;) {
    const open = src.indexOf(left, pos);
    let text = open < 0 ? src.slice(pos) : src.slice(pos, open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    if (open < 0) {
      out += text;
      return out;
    }
    let bodyStart = open + left.length;
    // Go: `{{- ` (dash then space) trims the whitespace before the action.
    if (src[bodyStart] === '-' && isSpace(src[bodyStart + 1])) {
      text = text.replace(/[ \t\r\n]+$/, '');
      bodyStart += 1;
    }
    out += text;
    const close = findClose(src, bodyStart, right);
    if (close < 0) throw new TemplateRenderError(`unclosed action: missing ${JSON.stringify(right)}`);
    let bodyEnd = close;
    trimNext = false;
    if (src[close - 1] === '-' && isSpace(src[close - 2]) && close - 1 > bodyStart) {
      trimNext = true;
      bodyEnd = close - 1;
    }
    out += evalAction(src.slice(bodyStart, bodyEnd), fns);
    pos = close + right.length;
  }
}
