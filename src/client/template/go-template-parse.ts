/**
 * Parses the subset of Go's text/template that Nomad templates use: text, actions with custom
 * delimiters and `{{-`/`-}}` trim markers, comments, pipelines (`|`) of commands whose operands
 * are string/raw-string/number/bool/nil literals, `.`, field chains (`.A.B`), variables (`$`,
 * `$x`, `$x.A`), parenthesised pipelines and function names; declarations (`$x := …`,
 * `$x = …`, `range $k, $v := …`); and `if`/`else if`/`else`/`end`, `with`/`else`/`end`,
 * `range`/`else`/`end`. Anything else (define, template, block) is refused by name.
 */
import { TemplateRenderError } from './template-error.js';

export type Operand =
  | { k: 'str'; v: string }
  | { k: 'num'; v: number }
  | { k: 'bool'; v: boolean }
  | { k: 'nil' }
  | { k: 'dot'; chain: string[] }
  | { k: 'var'; name: string; chain: string[] }
  | { k: 'fn'; name: string }
  | { k: 'sub'; pipe: Pipe; chain: string[] };

export interface Pipe {
  decl: string[];
  /** `=` (assign to an existing variable) rather than `:=`. */
  assign: boolean;
  cmds: Operand[][];
}

export type Node =
  | { k: 'text'; v: string }
  | { k: 'action'; pipe: Pipe }
  | BlockNode;

export interface BlockNode {
  k: 'if' | 'with' | 'range';
  pipe: Pipe;
  list: Node[];
  elseList: Node[] | null;
}

type Tok =
  | { t: 'str'; v: string }
  | { t: 'num'; v: string }
  | { t: 'ident'; v: string }
  | { t: 'field'; v: string }
  | { t: 'var'; v: string }
  | { t: 'punct'; v: '(' | ')' | '|' | ':=' | '=' | ',' };

const KEYWORDS = new Set(['if', 'else', 'end', 'range', 'with', 'define', 'template', 'block', 'break', 'continue']);

function isSpace(c: string | undefined): boolean {
  return c === ' ' || c === '\t' || c === '\n' || c === '\r';
}

/** Reads a double-quoted Go string literal starting at `i`; returns its value and the end index. */
export function readQuoted(src: string, i: number): { value: string; end: number } {
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

function tokenize(body: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < body.length) {
    const c = body[i]!;
    if (isSpace(c)) {
      i++;
    } else if (c === '"') {
      const q = readQuoted(body, i);
      out.push({ t: 'str', v: q.value });
      i = q.end;
    } else if (c === '`') {
      const end = body.indexOf('`', i + 1);
      if (end < 0) throw new TemplateRenderError('unterminated raw string');
      out.push({ t: 'str', v: body.slice(i + 1, end) });
      i = end + 1;
    } else if (body.startsWith(':=', i)) {
      out.push({ t: 'punct', v: ':=' });
      i += 2;
    } else if (c === '(' || c === ')' || c === '|' || c === '=' || c === ',') {
      out.push({ t: 'punct', v: c });
      i++;
    } else {
      const m = /^(?:\$[A-Za-z_0-9]*(?:\.[A-Za-z_]\w*)*|\.(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)?|[A-Za-z_]\w*|-?\d+(?:\.\d+)?)/.exec(body.slice(i));
      if (!m) throw new TemplateRenderError(`unsupported syntax ${JSON.stringify(c)}`);
      const t = m[0];
      if (t.startsWith('$')) out.push({ t: 'var', v: t });
      else if (t.startsWith('.')) out.push({ t: 'field', v: t });
      else if (/^[-\d]/.test(t)) out.push({ t: 'num', v: t });
      else out.push({ t: 'ident', v: t });
      i += t.length;
      // A field chain may follow a closing parenthesis: (…).Name
    }
  }
  return out;
}

/** Parses the tokens of one action into a pipeline. */
class PipeParser {
  private i = 0;
  constructor(private readonly toks: Tok[]) {}

  parse(allowDecl: boolean): Pipe {
    const pipe = this.pipe(allowDecl, false);
    if (this.i < this.toks.length) throw new TemplateRenderError(`unexpected ${this.describe(this.toks[this.i]!)} in command`);
    return pipe;
  }

  private describe(t: Tok): string {
    return JSON.stringify(t.v);
  }

  private pipe(allowDecl: boolean, nested: boolean): Pipe {
    const decl: string[] = [];
    let assign = false;
    if (allowDecl) {
      // `$x :=`, `$x =`, `$k, $v :=`
      const save = this.i;
      const names: string[] = [];
      while (this.toks[this.i]?.t === 'var' && !this.toks[this.i]!.v.includes('.')) {
        names.push(this.toks[this.i]!.v);
        this.i++;
        const p = this.toks[this.i];
        if (p?.t === 'punct' && p.v === ',' && names.length < 2) {
          this.i++;
          continue;
        }
        break;
      }
      const op = this.toks[this.i];
      if (names.length > 0 && op?.t === 'punct' && (op.v === ':=' || op.v === '=')) {
        decl.push(...names);
        assign = op.v === '=';
        this.i++;
      } else {
        this.i = save;
      }
    }
    const cmds: Operand[][] = [[]];
    while (this.i < this.toks.length) {
      const t = this.toks[this.i]!;
      if (t.t === 'punct' && t.v === ')') {
        if (!nested) throw new TemplateRenderError('unexpected ")" in command');
        break;
      }
      this.i++;
      if (t.t === 'punct') {
        if (t.v === '|') {
          if (cmds[cmds.length - 1]!.length === 0) throw new TemplateRenderError('missing command in pipeline');
          cmds.push([]);
          continue;
        }
        if (t.v === '(') {
          const sub = this.pipe(false, true);
          const close = this.toks[this.i];
          if (close?.t !== 'punct' || close.v !== ')') throw new TemplateRenderError('unclosed left paren');
          this.i++;
          let chain: string[] = [];
          const next = this.toks[this.i];
          if (next?.t === 'field') {
            chain = next.v.slice(1).split('.');
            this.i++;
          }
          cmds[cmds.length - 1]!.push({ k: 'sub', pipe: sub, chain });
          continue;
        }
        throw new TemplateRenderError(`unexpected ${JSON.stringify(t.v)} in command`);
      }
      cmds[cmds.length - 1]!.push(this.operand(t));
    }
    if (cmds[cmds.length - 1]!.length === 0) throw new TemplateRenderError(cmds.length > 1 ? 'missing command in pipeline' : 'missing value for command');
    return { decl, assign, cmds };
  }

  private operand(t: Exclude<Tok, { t: 'punct' }>): Operand {
    switch (t.t) {
      case 'str':
        return { k: 'str', v: t.v };
      case 'num':
        return { k: 'num', v: Number(t.v) };
      case 'field':
        return { k: 'dot', chain: t.v === '.' ? [] : t.v.slice(1).split('.') };
      case 'var': {
        const [name, ...chain] = t.v.split('.');
        return { k: 'var', name: name!, chain };
      }
      case 'ident':
        if (t.v === 'true' || t.v === 'false') return { k: 'bool', v: t.v === 'true' };
        if (t.v === 'nil') return { k: 'nil' };
        if (KEYWORDS.has(t.v)) throw new TemplateRenderError(`unexpected keyword ${JSON.stringify(t.v)} in command`);
        return { k: 'fn', name: t.v };
    }
  }
}

/** One delimited piece of the source: text, or an action's body. */
type Piece = { k: 'text'; v: string } | { k: 'action'; body: string };

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

/** Splits a template into text and action bodies, applying trim markers and dropping comments. */
function split(src: string, left: string, right: string): Piece[] {
  const out: Piece[] = [];
  let pos = 0;
  let trimNext = false;
  for (;;) {
    const open = src.indexOf(left, pos);
    let text = open < 0 ? src.slice(pos) : src.slice(pos, open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/, '');
    if (open < 0) {
      if (text) out.push({ k: 'text', v: text });
      return out;
    }
    let bodyStart = open + left.length;
    // Go: `{{- ` (dash then space) trims the whitespace before the action.
    if (src[bodyStart] === '-' && isSpace(src[bodyStart + 1])) {
      text = text.replace(/[ \t\r\n]+$/, '');
      bodyStart += 1;
    }
    if (text) out.push({ k: 'text', v: text });
    const close = findClose(src, bodyStart, right);
    if (close < 0) throw new TemplateRenderError(`unclosed action: missing ${JSON.stringify(right)}`);
    let bodyEnd = close;
    trimNext = false;
    if (src[close - 1] === '-' && isSpace(src[close - 2]) && close - 1 > bodyStart) {
      trimNext = true;
      bodyEnd = close - 1;
    }
    const body = src.slice(bodyStart, bodyEnd).trim();
    if (body.startsWith('/*')) {
      if (!body.endsWith('*/')) throw new TemplateRenderError('unclosed comment');
    } else {
      out.push({ k: 'action', body });
    }
    pos = close + right.length;
  }
}

/** Parses a template into its tree. */
export function parseTemplate(src: string, left: string, right: string): Node[] {
  const pieces = split(src, left, right);
  let i = 0;
  // Parses nodes until an `end` or `else` (returned to the caller) or the end of input.
  const list = (inBlock: boolean): { nodes: Node[]; stop: 'end' | 'else' | null; elseRest: Tok[] } => {
    const nodes: Node[] = [];
    while (i < pieces.length) {
      const p = pieces[i++]!;
      if (p.k === 'text') {
        nodes.push({ k: 'text', v: p.v });
        continue;
      }
      const toks = tokenize(p.body);
      if (toks.length === 0) throw new TemplateRenderError('missing value for command');
      const head = toks[0]!;
      if (head.t === 'ident' && KEYWORDS.has(head.v)) {
        switch (head.v) {
          case 'end':
          case 'else':
            if (!inBlock) throw new TemplateRenderError(`unexpected {{${head.v}}}`);
            if (head.v === 'end' && toks.length > 1) throw new TemplateRenderError('unexpected arguments after "end"');
            return { nodes, stop: head.v, elseRest: toks.slice(1) };
          case 'if':
          case 'with':
          case 'range':
            nodes.push(block(head.v, toks.slice(1)));
            continue;
          default:
            throw new TemplateRenderError(`unsupported action ${JSON.stringify(head.v)}`);
        }
      }
      nodes.push({ k: 'action', pipe: new PipeParser(toks).parse(true) });
    }
    if (inBlock) throw new TemplateRenderError('unexpected EOF: missing {{end}}');
    return { nodes, stop: null, elseRest: [] };
  };
  const block = (kind: 'if' | 'with' | 'range', toks: Tok[]): Node => {
    if (toks.length === 0) throw new TemplateRenderError(`missing value for ${kind}`);
    const pipe = new PipeParser(toks).parse(true);
    const body = list(true);
    let elseList: Node[] | null = null;
    if (body.stop === 'else') {
      const rest = body.elseRest;
      // `{{ else if … }}` / `{{ else with … }}`: a nested block sharing this one's {{end}}.
      if (rest.length > 0 && rest[0]!.t === 'ident' && (rest[0]!.v === 'if' || rest[0]!.v === 'with')) {
        elseList = [block(rest[0]!.v, rest.slice(1))];
      } else {
        if (rest.length > 0) throw new TemplateRenderError('unexpected arguments after "else"');
        const tail = list(true);
        if (tail.stop !== 'end') throw new TemplateRenderError('expected {{end}} after {{else}}');
        elseList = tail.nodes;
      }
    }
    return { k: kind, pipe, list: body.nodes, elseList };
  };
  return list(false).nodes;
}
