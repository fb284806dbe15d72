/**
 * The outline of an HCL2 file: its attributes and blocks (type, labels, nesting) with where
 * each starts and ends in the source, expressions left as spans of text. hcl2json folds
 * labelled blocks into nested maps, which cannot hold one block type written with different
 * numbers of labels; this outline keeps the structure so a part of the file can be rewritten
 * before hcl2json sees it (see rewriteTaskConfigBlocks). It is not a validator: text it
 * cannot follow is an HclEvalError (HCL_SYNTAX, or HCL_LIMIT when nested too deep), and the
 * caller leaves the file to hcl2json, which reports the syntax error with its line.
 */
import { HclEvalError, HclEvalErrorCode } from './hcl2/hcl-eval-error.js';

/** An attribute `name = expr`: `exprStart..exprEnd` is the expression's text, trimmed. */
export interface OutlineAttribute {
  kind: 'attribute';
  name: string;
  start: number;
  exprStart: number;
  exprEnd: number;
}

/** A block `type "label" … { body }`: `bodyStart..bodyEnd` is between its braces. */
export interface OutlineBlock {
  kind: 'block';
  type: string;
  /** Each label as written, without its quotes (escapes left as they are). */
  labels: string[];
  start: number;
  bodyStart: number;
  bodyEnd: number;
  /** Just after the closing brace. */
  end: number;
  body: OutlineItem[];
}

export type OutlineItem = OutlineAttribute | OutlineBlock;

/** Deepest nesting of blocks, brackets and templates followed (hcl2json's own limit is far above what job files use). */
const MAX_DEPTH = 256;

const IDENT_START = /[A-Za-z_]/;
const IDENT_CHAR = /[A-Za-z0-9_-]/;

class OutlineScanner {
  pos = 0;

  constructor(private readonly src: string) {}

  private fail(message: string): never {
    throw new HclEvalError(HclEvalErrorCode.Syntax, `${message} at offset ${this.pos}`);
  }

  private tooDeep(what: string): never {
    throw new HclEvalError(HclEvalErrorCode.Limit, `${what} nested deeper than ${MAX_DEPTH} levels at offset ${this.pos}`);
  }

  private at(s: string): boolean {
    return this.src.startsWith(s, this.pos);
  }

  /** Skips spaces and comments; newlines too when `newlines`. A line comment stops before its newline. */
  private skipTrivia(newlines: boolean): void {
    for (;;) {
      const c = this.src.charAt(this.pos);
      if (c === ' ' || c === '\t' || c === '\r' || (newlines && c === '\n')) {
        this.pos++;
      } else if (c === '#' || this.at('//')) {
        while (this.pos < this.src.length && this.src.charAt(this.pos) !== '\n') this.pos++;
      } else if (this.at('/*')) {
        const end = this.src.indexOf('*/', this.pos + 2);
        if (end < 0) this.fail('unterminated comment');
        this.pos = end + 2;
      } else {
        return;
      }
    }
  }

  private ident(): string {
    if (!IDENT_START.test(this.src.charAt(this.pos))) this.fail('expected a name');
    const start = this.pos;
    while (this.pos < this.src.length && IDENT_CHAR.test(this.src.charAt(this.pos))) this.pos++;
    return this.src.slice(start, this.pos);
  }

  /** The items of a body, up to the end of the file or (inside a block) its closing brace. */
  body(depth: number, inBlock: boolean): OutlineItem[] {
    if (depth > MAX_DEPTH) this.tooDeep('blocks');
    const items: OutlineItem[] = [];
    for (;;) {
      this.skipTrivia(true);
      if (this.pos >= this.src.length) {
        if (inBlock) this.fail('unclosed block');
        return items;
      }
      if (this.src.charAt(this.pos) === '}') {
        if (!inBlock) this.fail('unexpected "}"');
        return items;
      }
      const start = this.pos;
      const name = this.ident();
      this.skipTrivia(false);
      if (this.src.charAt(this.pos) === '=' && this.src.charAt(this.pos + 1) !== '=') {
        this.pos++;
        this.skipTrivia(false);
        const exprStart = this.pos;
        const exprEnd = this.expression(depth);
        items.push({ kind: 'attribute', name, start, exprStart, exprEnd });
        continue;
      }
      const labels: string[] = [];
      while (this.src.charAt(this.pos) !== '{') {
        if (this.src.charAt(this.pos) === '"') {
          const from = this.pos;
          this.quoted(depth);
          labels.push(this.src.slice(from + 1, this.pos - 1));
        } else {
          labels.push(this.ident());
        }
        this.skipTrivia(false);
      }
      this.pos++;
      const bodyStart = this.pos;
      const body = this.body(depth + 1, true);
      const bodyEnd = this.pos;
      this.pos++;
      items.push({ kind: 'block', type: name, labels, start, bodyStart, bodyEnd, end: this.pos, body });
    }
  }

  /**
   * Moves past one attribute's expression: it ends at a newline or at the enclosing block's
   * closing brace, outside any brackets. Returns the end of its last token.
   */
  private expression(depth: number): number {
    let open = 0;
    let lastEnd = this.pos;
    for (;;) {
      if (this.pos >= this.src.length) {
        if (open > 0) this.fail('unclosed bracket');
        return lastEnd;
      }
      const c = this.src.charAt(this.pos);
      if (open === 0 && (c === '\n' || c === '}')) return lastEnd;
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '#' || this.at('//') || this.at('/*')) {
        this.skipTrivia(open > 0);
        continue;
      }
      if (c === '"') {
        this.quoted(depth);
      } else if (this.at('<<')) {
        this.heredoc();
      } else if (c === '(' || c === '[' || c === '{') {
        if (++open + depth > MAX_DEPTH) this.tooDeep('brackets');
        this.pos++;
      } else if (c === ')' || c === ']' || c === '}') {
        open--;
        this.pos++;
      } else {
        this.pos++;
      }
      lastEnd = this.pos;
    }
  }

  /** Moves past a quoted string, following `${…}` and `%{…}` into nested strings. */
  private quoted(depth: number): void {
    if (depth > MAX_DEPTH) this.tooDeep('templates');
    this.pos++;
    for (;;) {
      if (this.pos >= this.src.length) this.fail('unterminated string');
      const c = this.src.charAt(this.pos);
      if (c === '\n') this.fail('newline in a quoted string');
      if (c === '\\') {
        this.pos += 2;
      } else if (c === '"') {
        this.pos++;
        return;
      } else if (this.at('$${') || this.at('%%{')) {
        this.pos += 3;
      } else if (this.at('${') || this.at('%{')) {
        this.pos += 2;
        this.interpolation(depth + 1);
      } else {
        this.pos++;
      }
    }
  }

  /** Moves past the rest of a `${…}` or `%{…}`, after its opening. */
  private interpolation(depth: number): void {
    let open = 1;
    while (open > 0) {
      if (this.pos >= this.src.length) this.fail('unterminated interpolation');
      const c = this.src.charAt(this.pos);
      if (c === '"') {
        this.quoted(depth);
        continue;
      }
      if (this.at('<<')) {
        this.heredoc();
        continue;
      }
      if (c === '{') open++;
      else if (c === '}') open--;
      this.pos++;
    }
  }

  /** Moves past `<<ID` or `<<-ID` … the line holding only `ID`, leaving the newline after it. */
  private heredoc(): void {
    this.pos += 2;
    if (this.src.charAt(this.pos) === '-') this.pos++;
    const marker = this.ident();
    const lineEnd = this.src.indexOf('\n', this.pos);
    if (lineEnd < 0) this.fail('unterminated heredoc');
    let cursor = lineEnd + 1;
    for (;;) {
      const next = this.src.indexOf('\n', cursor);
      const line = this.src.slice(cursor, next < 0 ? this.src.length : next);
      if (line.trim() === marker) {
        this.pos = cursor + line.length;
        return;
      }
      if (next < 0) this.fail(`heredoc without its closing ${marker}`);
      cursor = next + 1;
    }
  }
}

/** The outline of a whole file's body. Throws HclEvalError where it cannot follow the text. */
export function outlineHclBody(src: string): OutlineItem[] {
  return new OutlineScanner(src).body(0, false);
}
