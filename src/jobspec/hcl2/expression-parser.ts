/**
 * A recursive-descent parser for HCL2 expressions and templates, the text hcl2json leaves
 * in `${…}` strings. It covers what Nomad's jobspec2 accepts: literals, operators,
 * conditionals, `for` expressions, splats, indexing, function calls (with `...` expansion),
 * quoted and heredoc templates with `${…}` interpolation and `%{if}`/`%{for}` directives and
 * `~` strip markers. Nesting is bounded so a hostile file cannot exhaust the stack.
 */
import type { BinaryOp, Expr, TemplatePart, Traverser } from './expression-ast.js';
import { HclEvalError, HclEvalErrorCode } from './hcl-eval-error.js';

/** Deepest nesting of expressions and templates accepted (Nomad's own files stay under 20). */
export const MAX_NESTING = 64;

const BINARY_LEVELS: readonly (readonly BinaryOp[])[] = [
  ['||'],
  ['&&'],
  ['==', '!='],
  ['<=', '>=', '<', '>'],
  ['+', '-'],
  ['*', '/', '%'],
];

const IDENT_START = /[A-Za-z_]/;
const IDENT_CHAR = /[A-Za-z0-9_-]/;

type TemplateToken =
  | { t: 'text'; text: string }
  | { t: 'interp'; expr: Expr; stripLeft: boolean; stripRight: boolean }
  | {
      t: 'directive';
      word: 'if' | 'else' | 'endif' | 'for' | 'endfor';
      cond?: Expr;
      keyVar?: string;
      valueVar?: string;
      coll?: Expr;
      stripLeft: boolean;
      stripRight: boolean;
    };

class Parser {
  pos = 0;
  depth = 0;

  constructor(readonly src: string) {}

  fail(message: string): never {
    throw new HclEvalError(HclEvalErrorCode.Syntax, `${message} at column ${this.pos + 1} of ${JSON.stringify(clip(this.src))}`);
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING) {
      throw new HclEvalError(HclEvalErrorCode.Limit, `expression nested deeper than ${MAX_NESTING} levels`);
    }
  }

  private leave(): void {
    this.depth--;
  }

  peek(n = 0): string {
    return this.src.charAt(this.pos + n);
  }

  startsWith(s: string): boolean {
    return this.src.startsWith(s, this.pos);
  }

  skipSpace(): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') {
        this.pos++;
      } else if (c === '#' || this.startsWith('//')) {
        while (this.pos < this.src.length && this.peek() !== '\n') this.pos++;
      } else if (this.startsWith('/*')) {
        const end = this.src.indexOf('*/', this.pos + 2);
        if (end < 0) this.fail('unterminated comment');
        this.pos = end + 2;
      } else {
        return;
      }
    }
  }

  expect(s: string): void {
    this.skipSpace();
    if (!this.startsWith(s)) this.fail(`expected "${s}"`);
    this.pos += s.length;
  }

  ident(): string {
    this.skipSpace();
    if (!IDENT_START.test(this.peek())) this.fail('expected a name');
    const start = this.pos;
    while (this.pos < this.src.length && IDENT_CHAR.test(this.peek())) this.pos++;
    return this.src.slice(start, this.pos);
  }

  /** True when the next word is `word` (not a prefix of a longer name). */
  atKeyword(word: string): boolean {
    this.skipSpace();
    return this.startsWith(word) && !IDENT_CHAR.test(this.src.charAt(this.pos + word.length));
  }

  // ---- expressions ----

  expression(): Expr {
    this.enter();
    try {
      const cond = this.binary(0);
      this.skipSpace();
      if (this.peek() !== '?') return cond;
      this.pos++;
      const then = this.expression();
      this.expect(':');
      const otherwise = this.expression();
      return { kind: 'conditional', cond, then, else: otherwise };
    } finally {
      this.leave();
    }
  }

  private binary(level: number): Expr {
    if (level >= BINARY_LEVELS.length) return this.unary();
    let left = this.binary(level + 1);
    for (;;) {
      this.skipSpace();
      const op = BINARY_LEVELS[level]!.find((o) => this.startsWith(o) && !this.isLongerOperator(o));
      if (!op) return left;
      this.pos += op.length;
      this.enter();
      try {
        left = { kind: 'binary', op, left, right: this.binary(level + 1) };
      } finally {
        this.leave();
      }
    }
  }

  /** `=` of `==`/`=>`, `<` of `<=`, `%` of `%{`, `/` of a comment are not these operators. */
  private isLongerOperator(op: string): boolean {
    const next = this.src.charAt(this.pos + op.length);
    if (op === '<' || op === '>') return next === '=';
    if (op === '%') return next === '{';
    if (op === '/') return next === '/' || next === '*';
    return false;
  }

  private unary(): Expr {
    this.skipSpace();
    const c = this.peek();
    if ((c === '!' && this.peek(1) !== '=') || c === '-') {
      this.pos++;
      this.enter();
      try {
        return { kind: 'unary', op: c, operand: this.unary() };
      } finally {
        this.leave();
      }
    }
    return this.postfix();
  }

  private postfix(): Expr {
    const start = this.pos;
    let expr = this.primary();
    for (;;) {
      const save = this.pos;
      this.skipSpace();
      if (this.startsWith('...')) {
        this.pos = save;
        return expr;
      }
      if (this.startsWith('.*') || this.startsWith('[*]')) {
        const full = this.peek() === '[';
        this.pos += full ? 3 : 2;
        return { kind: 'splat', target: expr, each: this.splatSteps(full) };
      }
      const step = this.traverser();
      if (!step) {
        this.pos = save;
        return expr;
      }
      if (expr.kind === 'traversal') {
        expr = { ...expr, steps: [...expr.steps, step], source: this.src.slice(start, this.pos).trim() };
      } else {
        expr = step.kind === 'attr' ? { kind: 'getattr', target: expr, name: step.name } : { kind: 'index', target: expr, key: step.key };
      }
    }
  }

  /** One `.name`, `.0` or `[expr]` step, or undefined (position unchanged) when there is none. */
  private traverser(): Traverser | undefined {
    if (this.peek() === '.' && this.peek(1) !== '.') {
      this.pos++;
      if (/[0-9]/.test(this.peek())) {
        const m = /^[0-9]+/.exec(this.src.slice(this.pos))!;
        this.pos += m[0].length;
        return { kind: 'index', key: { kind: 'literal', value: Number(m[0]) } };
      }
      return { kind: 'attr', name: this.ident() };
    }
    if (this.peek() === '[') {
      this.pos++;
      const key = this.expression();
      this.expect(']');
      return { kind: 'index', key };
    }
    return undefined;
  }

  /** The steps after a splat, applied to each element; `.*` takes only attribute steps. */
  private splatSteps(full: boolean): Expr {
    let each: Expr = { kind: 'splat-item' };
    for (;;) {
      const save = this.pos;
      this.skipSpace();
      if (this.startsWith('...') || (!full && this.peek() === '[')) {
        this.pos = save;
        return each;
      }
      const step = this.traverser();
      if (!step) {
        this.pos = save;
        return each;
      }
      each = step.kind === 'attr' ? { kind: 'getattr', target: each, name: step.name } : { kind: 'index', target: each, key: step.key };
    }
  }

  private primary(): Expr {
    this.skipSpace();
    const c = this.peek();
    if (c === '') this.fail('expected an expression');
    if (/[0-9]/.test(c)) return this.number();
    if (c === '"') {
      this.pos++;
      const parts = this.template(true);
      this.pos++; // closing quote
      return templateExpr(parts);
    }
    if (this.startsWith('<<')) return this.heredoc();
    if (c === '(') {
      this.pos++;
      const inner = this.expression();
      this.expect(')');
      return inner;
    }
    if (c === '[') return this.tupleOrFor();
    if (c === '{') return this.objectOrFor();
    if (IDENT_START.test(c)) {
      const start = this.pos;
      const name = this.ident();
      if (name === 'true' || name === 'false') return { kind: 'literal', value: name === 'true' };
      if (name === 'null') return { kind: 'literal', value: null };
      const save = this.pos;
      this.skipSpace();
      if (this.peek() === '(') {
        this.pos++;
        return this.call(name);
      }
      this.pos = save;
      return { kind: 'traversal', root: name, steps: [], source: this.src.slice(start, this.pos) };
    }
    this.fail(`unexpected ${JSON.stringify(c)}`);
  }

  private number(): Expr {
    const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.src.slice(this.pos))!;
    this.pos += m[0].length;
    return { kind: 'literal', value: Number(m[0]) };
  }

  private call(name: string): Expr {
    const args: Expr[] = [];
    let expandFinal = false;
    this.enter();
    try {
      this.skipSpace();
      while (this.peek() !== ')') {
        if (expandFinal) this.fail('"..." may only follow the last argument');
        args.push(this.expression());
        this.skipSpace();
        if (this.startsWith('...')) {
          this.pos += 3;
          expandFinal = true;
          this.skipSpace();
        }
        if (this.peek() === ',') {
          this.pos++;
          this.skipSpace();
        } else if (this.peek() !== ')') {
          this.fail(`expected "," or ")" in the arguments of ${name}()`);
        }
      }
      this.pos++;
      return { kind: 'call', name, args, expandFinal };
    } finally {
      this.leave();
    }
  }

  private tupleOrFor(): Expr {
    this.pos++;
    if (this.atKeyword('for')) return this.forExpr(false);
    const items: Expr[] = [];
    this.enter();
    try {
      this.skipSpace();
      while (this.peek() !== ']') {
        items.push(this.expression());
        this.skipSpace();
        if (this.peek() === ',') {
          this.pos++;
          this.skipSpace();
        } else if (this.peek() !== ']') {
          this.fail('expected "," or "]" in a list');
        }
      }
      this.pos++;
      return { kind: 'tuple', items };
    } finally {
      this.leave();
    }
  }

  private objectOrFor(): Expr {
    this.pos++;
    if (this.atKeyword('for')) return this.forExpr(true);
    const items: { key: Expr; value: Expr }[] = [];
    this.enter();
    try {
      this.skipSpace();
      while (this.peek() !== '}') {
        items.push({ key: this.objectKey(), value: (this.skipSpace(), this.expression()) });
        this.skipSpace();
        if (this.peek() === ',') this.pos++;
        this.skipSpace();
      }
      this.pos++;
      return { kind: 'object', items };
    } finally {
      this.leave();
    }
  }

  /** An object key: a bare name is literal text; anything else is an expression. Eats `=`/`:`. */
  private objectKey(): Expr {
    const save = this.pos;
    let key: Expr | undefined;
    if (IDENT_START.test(this.peek())) {
      const name = this.ident();
      this.skipSpace();
      if ((this.peek() === '=' && this.peek(1) !== '=') || this.peek() === ':') key = { kind: 'literal', value: name };
      else this.pos = save;
    }
    key ??= this.expression();
    this.skipSpace();
    if ((this.peek() === '=' && this.peek(1) !== '=' && this.peek(1) !== '>') || this.peek() === ':') this.pos++;
    else this.fail('expected "=" or ":" after an object key');
    return key;
  }

  private forExpr(isObject: boolean): Expr {
    this.pos += 3;
    this.enter();
    try {
      const first = this.ident();
      let keyVar: string | undefined;
      let valueVar = first;
      this.skipSpace();
      if (this.peek() === ',') {
        this.pos++;
        keyVar = first;
        valueVar = this.ident();
      }
      if (!this.atKeyword('in')) this.fail('expected "in" in a for expression');
      this.pos += 2;
      const coll = this.expression();
      this.expect(':');
      let keyExpr: Expr | undefined;
      let valueExpr = this.expression();
      let group = false;
      if (isObject) {
        this.expect('=>');
        keyExpr = valueExpr;
        valueExpr = this.expression();
        this.skipSpace();
        if (this.startsWith('...')) {
          this.pos += 3;
          group = true;
        }
      }
      let cond: Expr | undefined;
      if (this.atKeyword('if')) {
        this.pos += 2;
        cond = this.expression();
      }
      this.expect(isObject ? '}' : ']');
      return { kind: 'for', keyVar, valueVar, coll, keyExpr, valueExpr, cond, group };
    } finally {
      this.leave();
    }
  }

  private heredoc(): Expr {
    this.pos += 2;
    const indented = this.peek() === '-';
    if (indented) this.pos++;
    const marker = this.ident();
    const nl = this.src.indexOf('\n', this.pos);
    if (nl < 0) this.fail('expected a newline after the heredoc marker');
    const lines: string[] = [];
    let at = nl + 1;
    for (;;) {
      const end = this.src.indexOf('\n', at);
      const line = this.src.slice(at, end < 0 ? this.src.length : end);
      if (line.trim() === marker) {
        this.pos = at + line.length;
        break;
      }
      if (end < 0) this.fail(`heredoc is missing its closing marker ${marker}`);
      lines.push(line);
      at = end + 1;
    }
    let body = lines.map((l) => `${l}\n`);
    if (indented) {
      const indents = lines.filter((l) => l.trim() !== '').map((l) => /^[ \t]*/.exec(l)![0].length);
      const cut = indents.length > 0 ? Math.min(...indents) : 0;
      body = body.map((l) => l.slice(Math.min(cut, /^[ \t]*/.exec(l)![0].length)));
    }
    const inner = new Parser(body.join(''));
    inner.depth = this.depth;
    return templateExpr(inner.template(false));
  }

  // ---- templates ----

  /**
   * Parses template text up to the end of input, or with `quoted` up to an unescaped `"`
   * (left unconsumed); backslash escapes apply only in quoted strings.
   */
  template(quoted: boolean): TemplatePart[] {
    this.enter();
    try {
      const tokens = this.templateTokens(quoted);
      const [parts, next, end] = buildTemplate(tokens, 0, []);
      if (next < tokens.length || end) this.fail(`unexpected %{${end ?? ''}} in a template`);
      return parts;
    } finally {
      this.leave();
    }
  }

  private templateTokens(quoted: boolean): TemplateToken[] {
    const tokens: TemplateToken[] = [];
    let text = '';
    const flush = (): void => {
      if (text) tokens.push({ t: 'text', text });
      text = '';
    };
    for (;;) {
      if (this.pos >= this.src.length) {
        if (quoted) this.fail('unterminated string');
        break;
      }
      const c = this.peek();
      if (quoted && c === '"') break;
      if (this.startsWith('$${') || this.startsWith('%%{')) {
        text += `${c}{`;
        this.pos += 3;
      } else if (this.startsWith('${')) {
        flush();
        this.pos += 2;
        const stripLeft = this.eatTilde();
        const expr = this.expression();
        this.skipSpace();
        const stripRight = this.eatTilde();
        this.expect('}');
        tokens.push({ t: 'interp', expr, stripLeft, stripRight });
      } else if (this.startsWith('%{')) {
        flush();
        this.pos += 2;
        tokens.push(this.directive());
      } else if (quoted && c === '\\') {
        text += this.escape();
      } else if (quoted && c === '\n') {
        this.fail('unterminated string');
      } else {
        text += c;
        this.pos++;
      }
    }
    flush();
    return tokens;
  }

  private eatTilde(): boolean {
    this.skipSpace();
    if (this.peek() !== '~') return false;
    this.pos++;
    return true;
  }

  private directive(): TemplateToken {
    const stripLeft = this.eatTilde();
    const word = this.ident();
    const tok: TemplateToken = { t: 'directive', word: 'endif', stripLeft, stripRight: false };
    switch (word) {
      case 'if':
        tok.word = 'if';
        tok.cond = this.expression();
        break;
      case 'else':
      case 'endif':
      case 'endfor':
        tok.word = word;
        break;
      case 'for': {
        tok.word = 'for';
        const first = this.ident();
        this.skipSpace();
        if (this.peek() === ',') {
          this.pos++;
          tok.keyVar = first;
          tok.valueVar = this.ident();
        } else {
          tok.valueVar = first;
        }
        if (!this.atKeyword('in')) this.fail('expected "in" in a %{for} directive');
        this.pos += 2;
        tok.coll = this.expression();
        break;
      }
      default:
        this.fail(`unknown template directive %{${word}}`);
    }
    tok.stripRight = this.eatTilde();
    this.expect('}');
    return tok;
  }

  private escape(): string {
    const next = this.peek(1);
    this.pos += 2;
    switch (next) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '"':
        return '"';
      case '\\':
        return '\\';
      case 'u':
      case 'U': {
        const len = next === 'u' ? 4 : 8;
        const hex = this.src.slice(this.pos, this.pos + len);
        if (!/^[0-9A-Fa-f]+$/.test(hex) || hex.length !== len) this.fail('invalid unicode escape');
        this.pos += len;
        const code = parseInt(hex, 16);
        if (code > 0x10ffff) this.fail('invalid unicode escape');
        return String.fromCodePoint(code);
      }
      default:
        this.pos -= 2;
        this.fail(`invalid escape "\\${next}"`);
    }
  }
}

/** Applies strip markers, then nests directive bodies. Returns [parts, next index, end word]. */
function buildTemplate(tokens: TemplateToken[], from: number, until: readonly string[]): [TemplatePart[], number, string | undefined] {
  const parts: TemplatePart[] = [];
  let i = from;
  while (i < tokens.length) {
    const tok = tokens[i]!;
    if (tok.t === 'text') {
      let text = tok.text;
      const prev = tokens[i - 1];
      const next = tokens[i + 1];
      if (prev && prev.t !== 'text' && prev.stripRight) text = text.replace(/^\s+/, '');
      if (next && next.t !== 'text' && next.stripLeft) text = text.replace(/\s+$/, '');
      if (text) parts.push({ kind: 'text', text });
      i++;
      continue;
    }
    if (tok.t === 'interp') {
      parts.push({ kind: 'interp', expr: tok.expr });
      i++;
      continue;
    }
    if (until.includes(tok.word)) return [parts, i, tok.word];
    if (tok.word === 'if') {
      const [then, afterThen, end] = buildTemplate(tokens, i + 1, ['else', 'endif']);
      let otherwise: TemplatePart[] = [];
      let next = afterThen + 1;
      if (end === 'else') {
        const [elseParts, afterElse, end2] = buildTemplate(tokens, afterThen + 1, ['endif']);
        if (end2 !== 'endif') throw new HclEvalError(HclEvalErrorCode.Syntax, '%{if} without %{endif}');
        otherwise = elseParts;
        next = afterElse + 1;
      } else if (end !== 'endif') {
        throw new HclEvalError(HclEvalErrorCode.Syntax, '%{if} without %{endif}');
      }
      parts.push({ kind: 'if', cond: tok.cond!, then, else: otherwise });
      i = next;
      continue;
    }
    if (tok.word === 'for') {
      const [body, after, end] = buildTemplate(tokens, i + 1, ['endfor']);
      if (end !== 'endfor') throw new HclEvalError(HclEvalErrorCode.Syntax, '%{for} without %{endfor}');
      parts.push({ kind: 'for', keyVar: tok.keyVar, valueVar: tok.valueVar!, coll: tok.coll!, body });
      i = after + 1;
      continue;
    }
    throw new HclEvalError(HclEvalErrorCode.Syntax, `%{${tok.word}} without its opening directive`);
  }
  return [parts, i, undefined];
}

function templateExpr(parts: TemplatePart[]): Expr {
  if (parts.length === 0) return { kind: 'literal', value: '' };
  if (parts.length === 1 && parts[0]!.kind === 'text') return { kind: 'literal', value: parts[0].text };
  return { kind: 'template', parts };
}

function clip(s: string): string {
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Parses one expression (the inside of `${…}`); trailing text is a syntax error. */
export function parseExpression(src: string): Expr {
  const p = new Parser(src);
  const expr = p.expression();
  p.skipSpace();
  if (p.pos < src.length) p.fail('unexpected text after the expression');
  return expr;
}

/**
 * Parses template text as hcl2json leaves it (escapes `$${`/`%%{` intact, backslash escapes
 * already decoded). A template of one interpolation keeps its value's type, as in HCL.
 */
export function parseTemplateText(src: string): TemplatePart[] {
  return new Parser(src).template(false);
}

/** Parses template text into an expression node (a literal when there is nothing to evaluate). */
export function parseTemplateExpr(src: string): Expr {
  return templateExpr(parseTemplateText(src));
}
