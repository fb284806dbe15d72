/**
 * The YAML that `yamlencode`/`yamldecode` need, without a YAML library: encoding writes
 * cty-yaml's shape (every string and key double-quoted, block style, sorted keys); decoding
 * reads block mappings and sequences, plain/quoted scalars, `|`/`>` blocks, flow `[…]`/`{…}`
 * collections and comments — the YAML people put in job files. Anchors, tags and multiple
 * documents are refused with a message rather than misread.
 */
import type { HclValue } from '../expression-ast.js';
import { evalError } from '../hcl-eval-error.js';
import { isHclObject, numberToString, setKey, sortedKeys, type HclObject } from '../hcl-value.js';

function quote(s: string): string {
  return JSON.stringify(s);
}

function encodeScalar(v: HclValue): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return quote(v);
  if (typeof v === 'number') return numberToString(v);
  return String(v);
}

function encodeBlock(v: HclValue, indent: string): string {
  if (Array.isArray(v)) {
    if (v.length === 0) return `${indent}[]\n`;
    return v
      .map((item) => {
        if ((Array.isArray(item) && item.length > 0) || (isHclObject(item) && Object.keys(item).length > 0)) {
          const inner = encodeBlock(item, `${indent}  `);
          return `${indent}- ${inner.slice(indent.length + 2)}`;
        }
        return `${indent}- ${inlineOrEmpty(item)}\n`;
      })
      .join('');
  }
  if (isHclObject(v)) {
    const keys = sortedKeys(v);
    if (keys.length === 0) return `${indent}{}\n`;
    return keys
      .map((k) => {
        const item = v[k]!;
        if (Array.isArray(item) && item.length > 0) return `${indent}${quote(k)}:\n${encodeBlock(item, indent)}`;
        if (isHclObject(item) && Object.keys(item).length > 0) return `${indent}${quote(k)}:\n${encodeBlock(item, `${indent}  `)}`;
        return `${indent}${quote(k)}: ${inlineOrEmpty(item)}\n`;
      })
      .join('');
  }
  return `${indent}${encodeScalar(v)}\n`;
}

function inlineOrEmpty(v: HclValue): string {
  if (Array.isArray(v)) return '[]';
  if (isHclObject(v)) return '{}';
  return encodeScalar(v);
}

/** Encodes a value as YAML, in cty-yaml's block style. */
export function yamlEncode(v: HclValue): string {
  return encodeBlock(v, '');
}

interface Line {
  indent: number;
  text: string;
  no: number;
}

/** Strips a `# comment` that is outside quotes. */
function stripComment(s: string): string {
  let quoteChar = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quoteChar) {
      if (c === '\\' && quoteChar === '"') i++;
      else if (c === quoteChar) quoteChar = '';
    } else if (c === '"' || c === "'") {
      quoteChar = c;
    } else if (c === '#' && (i === 0 || /\s/.test(s[i - 1]!))) {
      return s.slice(0, i).trimEnd();
    }
  }
  return s.trimEnd();
}

class YamlReader {
  private i = 0;

  constructor(private readonly lines: Line[], private readonly raw: string[]) {}

  fail(message: string, line?: Line): never {
    throw evalError(`invalid YAML${line ? ` on line ${line.no}` : ''}: ${message}`);
  }

  value(indent: number): HclValue {
    const line = this.lines[this.i];
    if (!line || line.indent < indent) return null;
    if (line.text === '-' || line.text.startsWith('- ')) return this.sequence(line.indent);
    if (this.keyOf(line.text) !== undefined) return this.mapping(line.indent);
    this.i++;
    return this.scalarOrFlow(line.text, line);
  }

  private keyOf(text: string): [string, string] | undefined {
    const m = /^("(?:[^"\\]|\\.)*"|'(?:[^']|'')*'|[^\s"'[{#][^:#]*?)\s*:(?:\s+(.*))?$/.exec(text);
    if (!m) return undefined;
    const key = m[1]!;
    const k = key.startsWith('"') ? (JSON.parse(key) as string) : key.startsWith("'") ? key.slice(1, -1).replace(/''/g, "'") : key;
    return [k, m[2] ?? ''];
  }

  private sequence(indent: number): HclValue[] {
    const out: HclValue[] = [];
    for (;;) {
      const line = this.lines[this.i];
      if (!line || line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) return out;
      const rest = line.text.slice(1).trimStart();
      if (rest === '') {
        this.i++;
        out.push(this.value(indent + 1));
      } else {
        // "- key: v" starts a mapping indented at the item's text.
        const inner = indent + line.text.length - rest.length;
        this.lines[this.i] = { indent: inner, text: rest, no: line.no };
        out.push(this.value(inner));
      }
    }
  }

  private mapping(indent: number): HclObject {
    const out: HclObject = {};
    for (;;) {
      const line = this.lines[this.i];
      if (!line || line.indent !== indent) return out;
      const kv = this.keyOf(line.text);
      if (!kv) this.fail(`expected "key: value", got ${JSON.stringify(line.text)}`, line);
      const [key, rest] = kv;
      this.i++;
      if (rest === '') {
        const next = this.lines[this.i];
        const isSeq = next && next.indent === indent && (next.text === '-' || next.text.startsWith('- '));
        setKey(out, key, next && (next.indent > indent || isSeq) ? this.value(isSeq ? indent : indent + 1) : null);
      } else if (/^[|>][+-]?$/.test(rest)) {
        setKey(out, key, this.blockScalar(rest, indent, line));
      } else {
        setKey(out, key, this.scalarOrFlow(rest, line));
      }
    }
  }

  private blockScalar(header: string, indent: number, at: Line): string {
    const collected: string[] = [];
    let rawIndex = at.no; // raw[] is 0-based; at.no is 1-based, so this is the next line
    let blockIndent = -1;
    while (rawIndex < this.raw.length) {
      const text = this.raw[rawIndex]!;
      const ind = /^ */.exec(text)![0].length;
      if (text.trim() !== '' && ind <= indent) break;
      if (text.trim() !== '' && blockIndent < 0) blockIndent = ind;
      collected.push(text.trim() === '' ? '' : text.slice(Math.max(0, blockIndent)));
      rawIndex++;
    }
    while (this.lines[this.i] && this.lines[this.i]!.no <= rawIndex) this.i++;
    while (collected.length > 0 && collected[collected.length - 1] === '' && !header.endsWith('+')) collected.pop();
    let text = header.startsWith('>') ? collected.join('\n').replace(/([^\n])\n(?=[^\n])/g, '$1 ') : collected.join('\n');
    if (!header.endsWith('-')) text += '\n';
    return text;
  }

  scalarOrFlow(text: string, line: Line): HclValue {
    if (/^[&*!]/.test(text)) this.fail('anchors, aliases and tags are not supported', line);
    if (text.startsWith('[') || text.startsWith('{')) return new FlowReader(text, (m) => this.fail(m, line)).read();
    return scalar(text, (m) => this.fail(m, line));
  }
}

/** Resolves a plain or quoted scalar by YAML 1.2's core schema. */
function scalar(text: string, fail: (m: string) => never): HclValue {
  if (text.startsWith('"')) {
    try {
      return JSON.parse(text) as string;
    } catch {
      fail(`bad double-quoted string ${text}`);
    }
  }
  if (text.startsWith("'")) {
    if (!text.endsWith("'") || text.length < 2) fail(`bad single-quoted string ${text}`);
    return text.slice(1, -1).replace(/''/g, "'");
  }
  if (/^(null|Null|NULL|~)?$/.test(text)) return null;
  if (/^(true|True|TRUE)$/.test(text)) return true;
  if (/^(false|False|FALSE)$/.test(text)) return false;
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text);
  if (/^0x[0-9a-fA-F]+$/.test(text)) return Number.parseInt(text.slice(2), 16);
  if (/^0o[0-7]+$/.test(text)) return Number.parseInt(text.slice(2), 8);
  if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(text)) return Number(text);
  return text;
}

class FlowReader {
  private pos = 0;
  private depth = 0;

  constructor(private readonly src: string, private readonly fail: (m: string) => never) {}

  read(): HclValue {
    const v = this.item();
    this.space();
    if (this.pos < this.src.length) this.fail(`unexpected text after a flow collection: ${this.src.slice(this.pos)}`);
    return v;
  }

  private space(): void {
    while (/\s/.test(this.src.charAt(this.pos))) this.pos++;
  }

  private item(): HclValue {
    this.space();
    const c = this.src.charAt(this.pos);
    if (c === '[' || c === '{') {
      if (++this.depth > 64) this.fail('flow collections nested too deeply');
      this.pos++;
      const isMap = c === '{';
      const list: HclValue[] = [];
      const map: HclObject = {};
      for (;;) {
        this.space();
        if (this.src.charAt(this.pos) === (isMap ? '}' : ']')) {
          this.pos++;
          this.depth--;
          return isMap ? map : list;
        }
        if (isMap) {
          const key = this.item();
          this.space();
          if (this.src.charAt(this.pos) !== ':') this.fail('expected ":" in a flow mapping');
          this.pos++;
          setKey(map, String(key), this.item());
        } else {
          list.push(this.item());
        }
        this.space();
        if (this.src.charAt(this.pos) === ',') this.pos++;
        else if (!'}]'.includes(this.src.charAt(this.pos)) || this.pos >= this.src.length) this.fail('expected "," in a flow collection');
      }
    }
    if (c === '"' || c === "'") {
      const re = c === '"' ? /^"(?:[^"\\]|\\.)*"/ : /^'(?:[^']|'')*'/;
      const m = re.exec(this.src.slice(this.pos));
      if (!m) this.fail('unterminated quoted string');
      this.pos += m[0].length;
      return scalar(m[0], this.fail);
    }
    const m = /^[^,[\]{}:]*(?::(?!\s)[^,[\]{}:]*)*/.exec(this.src.slice(this.pos))!;
    this.pos += m[0].length;
    return scalar(m[0].trim(), this.fail);
  }
}

/** Decodes one YAML document. */
export function yamlDecode(text: string): HclValue {
  const raw = text.replace(/\r\n/g, '\n').split('\n');
  const lines: Line[] = [];
  let started = false;
  for (const [i, r] of raw.entries()) {
    if (r.includes('\t') && /^\s*\t/.test(r)) throw evalError(`invalid YAML on line ${i + 1}: tabs cannot indent`);
    const stripped = stripComment(r);
    if (stripped.trim() === '') continue;
    if (/^---(\s|$)/.test(stripped)) {
      if (started) throw evalError('invalid YAML: only one document is supported');
      started = true;
      const rest = stripped.slice(3).trim();
      if (rest) lines.push({ indent: 0, text: rest, no: i + 1 });
      continue;
    }
    if (/^\.\.\.(\s|$)/.test(stripped)) break;
    if (/^%/.test(stripped)) continue;
    started = true;
    lines.push({ indent: /^ */.exec(stripped)![0].length, text: stripped.trim(), no: i + 1 });
  }
  if (lines.length === 0) return null;
  const reader = new YamlReader(lines, raw);
  const v = reader.value(lines[0]!.indent);
  return v;
}
