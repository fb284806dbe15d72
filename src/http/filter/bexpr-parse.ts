/**
 * Parser of Nomad's list filter language (the go-bexpr grammar): boolean expressions of
 * matches on selectors, joined by `and`, `or`, `not` and parentheses.
 *
 *   Expr   := Or
 *   Or     := And ("or" And)*
 *   And    := Unary ("and" Unary)*
 *   Unary  := "not" Unary | "(" Expr ")" | Match
 *   Match  := Selector ("==" | "!=") Value
 *           | Selector "is" ["not"] ("empty" | "nil")
 *           | Value ["not"] "in" Selector
 *           | Selector ["not"] ("contains" | "matches") Value
 *   Selector := Ident ("." Ident | "[" String "]")*
 *   Value  := "string" | `raw string` | a bare word or number
 *
 * Malformed input throws FilterSyntaxError naming the problem and its position; nothing
 * about a filter is ever silently ignored.
 */
import { CaravanError } from '../../structs/caravan-error.js';

/** A selector path: `Meta.team` → ["Meta", "team"]. */
export type Selector = readonly string[];

export type MatchOp = '==' | '!=' | 'is empty' | 'is not empty' | 'is nil' | 'is not nil' | 'in' | 'not in' | 'contains' | 'not contains' | 'matches' | 'not matches';

/** A parsed filter expression. */
export type FilterExpr =
  | { kind: 'and'; left: FilterExpr; right: FilterExpr }
  | { kind: 'or'; left: FilterExpr; right: FilterExpr }
  | { kind: 'not'; expr: FilterExpr }
  | { kind: 'match'; op: MatchOp; selector: Selector; value: string | undefined; regex: RegExp | undefined };

/** A filter that cannot be parsed (a 400); the message names the problem and where. */
export class FilterSyntaxError extends CaravanError<'HTTP_BAD_FILTER'> {
  constructor(reason: string) {
    super('HTTP_BAD_FILTER', { reason });
    this.name = 'FilterSyntaxError';
  }
}

type Token =
  | { t: 'word'; v: string; pos: number }
  | { t: 'string'; v: string; pos: number }
  | { t: 'op'; v: '==' | '!=' | '(' | ')' | '.' | '[' | ']'; pos: number }
  | { t: 'end'; pos: number };

const KEYWORDS = new Set(['and', 'or', 'not', 'in', 'is', 'empty', 'contains', 'matches']);

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const pos = i;
    if (c === '=' || c === '!') {
      if (src[i + 1] !== '=') throw new FilterSyntaxError(`unexpected "${c}" at position ${pos + 1} (want "==" or "!=")`);
      out.push({ t: 'op', v: c === '=' ? '==' : '!=', pos });
      i += 2;
      continue;
    }
    if (c === '(' || c === ')' || c === '.' || c === '[' || c === ']') {
      out.push({ t: 'op', v: c, pos });
      i++;
      continue;
    }
    if (c === '"') {
      let v = '';
      i++;
      for (;;) {
        if (i >= src.length) throw new FilterSyntaxError(`unterminated string starting at position ${pos + 1}`);
        const d = src[i]!;
        if (d === '"') break;
        if (d === '\\') {
          const n = src[i + 1];
          if (n === undefined) throw new FilterSyntaxError(`unterminated string starting at position ${pos + 1}`);
          v += n === 'n' ? '\n' : n === 't' ? '\t' : n;
          i += 2;
          continue;
        }
        v += d;
        i++;
      }
      i++;
      out.push({ t: 'string', v, pos });
      continue;
    }
    if (c === '`') {
      const end = src.indexOf('`', i + 1);
      if (end < 0) throw new FilterSyntaxError(`unterminated string starting at position ${pos + 1}`);
      out.push({ t: 'string', v: src.slice(i + 1, end), pos });
      i = end + 1;
      continue;
    }
    const m = /^[A-Za-z0-9_\-+:/]+/.exec(src.slice(i));
    if (!m) throw new FilterSyntaxError(`unexpected "${c}" at position ${pos + 1}`);
    out.push({ t: 'word', v: m[0], pos });
    i += m[0].length;
  }
  out.push({ t: 'end', pos: src.length });
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly toks: Token[]) {}

  private peek(offset = 0): Token {
    return this.toks[Math.min(this.i + offset, this.toks.length - 1)]!;
  }
  private next(): Token {
    const t = this.peek();
    if (t.t !== 'end') this.i++;
    return t;
  }
  private isWord(t: Token, w: string): boolean {
    return t.t === 'word' && t.v === w;
  }
  private fail(t: Token, want: string): never {
    const got = t.t === 'end' ? 'end of expression' : `"${t.v}"`;
    throw new FilterSyntaxError(`expected ${want} at position ${t.pos + 1}, found ${got}`);
  }

  parse(): FilterExpr {
    if (this.peek().t === 'end') throw new FilterSyntaxError('empty filter expression');
    const e = this.or();
    const t = this.peek();
    if (t.t !== 'end') this.fail(t, '"and", "or" or the end of the expression');
    return e;
  }
  private or(): FilterExpr {
    let left = this.and();
    while (this.isWord(this.peek(), 'or')) {
      this.next();
      left = { kind: 'or', left, right: this.and() };
    }
    return left;
  }
  private and(): FilterExpr {
    let left = this.unary();
    while (this.isWord(this.peek(), 'and')) {
      this.next();
      left = { kind: 'and', left, right: this.unary() };
    }
    return left;
  }
  private unary(): FilterExpr {
    const t = this.peek();
    // "not" begins a negation unless it is the "not in" of a match on a bare value named "not".
    if (this.isWord(t, 'not') && !this.isWord(this.peek(1), 'in')) {
      this.next();
      return { kind: 'not', expr: this.unary() };
    }
    if (t.t === 'op' && t.v === '(') {
      this.next();
      const e = this.or();
      const close = this.next();
      if (!(close.t === 'op' && close.v === ')')) this.fail(close, '")"');
      return e;
    }
    return this.match();
  }
  private match(): FilterExpr {
    const start = this.peek();
    // `Value [not] in Selector`: a value first, then "in".
    const after = this.peek(1);
    if (start.t === 'string' || (start.t === 'word' && (this.isWord(after, 'in') || (this.isWord(after, 'not') && this.isWord(this.peek(2), 'in'))))) {
      const value = this.value();
      let op: MatchOp = 'in';
      if (this.isWord(this.peek(), 'not')) {
        this.next();
        op = 'not in';
      }
      if (!this.isWord(this.next(), 'in')) this.fail(this.toks[this.i - 1]!, '"in" or "not in" after a value');
      return { kind: 'match', op, selector: this.selector(), value, regex: undefined };
    }
    const selector = this.selector();
    const t = this.next();
    if (t.t === 'op' && (t.v === '==' || t.v === '!=')) return { kind: 'match', op: t.v, selector, value: this.value(), regex: undefined };
    if (this.isWord(t, 'is')) {
      const not = this.isWord(this.peek(), 'not');
      if (not) this.next();
      const e = this.next();
      if (!this.isWord(e, 'empty') && !this.isWord(e, 'nil')) this.fail(e, `"empty" or "nil" after "is${not ? ' not' : ''}"`);
      const op: MatchOp = e.t === 'word' && e.v === 'nil' ? (not ? 'is not nil' : 'is nil') : not ? 'is not empty' : 'is empty';
      return { kind: 'match', op, selector, value: undefined, regex: undefined };
    }
    let negate = false;
    let verb = t;
    if (this.isWord(t, 'not')) {
      negate = true;
      verb = this.next();
    }
    if (this.isWord(verb, 'contains')) return { kind: 'match', op: negate ? 'not contains' : 'contains', selector, value: this.value(), regex: undefined };
    if (this.isWord(verb, 'matches')) {
      const vt = this.peek();
      const value = this.value();
      let regex: RegExp;
      try {
        regex = new RegExp(value);
      } catch (err) {
        throw new FilterSyntaxError(`invalid regular expression at position ${vt.pos + 1}: ${err instanceof Error ? err.message : String(err)}`);
      }
      return { kind: 'match', op: negate ? 'not matches' : 'matches', selector, value, regex };
    }
    return this.fail(verb, 'an operator ("==", "!=", "is empty", "is not empty", "is nil", "is not nil", "contains", "matches", "in")');
  }
  private selector(): Selector {
    const first = this.next();
    if (first.t !== 'word' || KEYWORDS.has(first.v) || !/^[A-Za-z_]/.test(first.v)) this.fail(first, 'a selector such as Status or Meta.team');
    const path = [first.v];
    for (;;) {
      const t = this.peek();
      if (t.t === 'op' && t.v === '.') {
        this.next();
        const seg = this.next();
        if (seg.t !== 'word') this.fail(seg, 'a field name after "."');
        path.push(seg.v);
        continue;
      }
      if (t.t === 'op' && t.v === '[') {
        this.next();
        const key = this.next();
        if (key.t !== 'string') this.fail(key, 'a quoted key inside "[]"');
        const close = this.next();
        if (!(close.t === 'op' && close.v === ']')) this.fail(close, '"]"');
        path.push(key.v);
        continue;
      }
      return path;
    }
  }
  private value(): string {
    const t = this.next();
    if (t.t === 'string') return t.v;
    if (t.t === 'word' && !KEYWORDS.has(t.v)) return t.v;
    return this.fail(t, 'a value (a quoted string, a number or a word)');
  }
}

/** Parses a filter expression; throws FilterSyntaxError naming the problem. */
export function parseFilter(src: string): FilterExpr {
  return new Parser(tokenize(src)).parse();
}
