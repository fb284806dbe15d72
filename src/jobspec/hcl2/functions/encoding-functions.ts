/** Encoding functions: base64, CSV, JSON, URL query escaping and YAML, as go-cty-funcs and cty do them. */
import type { HclValue } from '../expression-ast.js';
import type { HclFunction } from '../expression-evaluator.js';
import { evalError } from '../hcl-eval-error.js';
import { setKey, toStr, type HclObject } from '../hcl-value.js';
import { defineFunction } from './define-function.js';
import { jsonDecode, jsonEncode } from './json-codec.js';
import { yamlDecode, yamlEncode } from './yaml-codec.js';

function base64decode(s: string): string {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) throw evalError('failed to decode base64 data: the input is not valid base64');
  const bytes = Buffer.from(s, 'base64');
  const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
  if (!Buffer.from(text, 'utf8').equals(bytes)) throw evalError('the result of decoding the provided string is not valid UTF-8');
  return text;
}

/** One CSV record per line, RFC 4180 quoting; the first record names the columns. */
function csvdecode(text: string): HclValue {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') {
        quoted = false;
      } else {
        field += c;
      }
    } else if (c === '"' && field === '') {
      quoted = true;
    } else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      record.push(field);
      records.push(record);
      record = [];
      field = '';
    } else {
      field += c;
    }
  }
  if (quoted) throw evalError('CSV: a quoted field is not closed');
  if (field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  const [header, ...rows] = records;
  if (!header) throw evalError('CSV: missing header line');
  return rows.map((row, n) => {
    if (row.length !== header.length) throw evalError(`CSV: record ${n + 2} has ${row.length} fields, the header has ${header.length}`);
    const o: HclObject = {};
    header.forEach((h, i) => setKey(o, h, row[i]!));
    return o;
  });
}

/** Go's url.QueryEscape: spaces become "+", everything outside [A-Za-z0-9-_.~] is %XX. */
function urlencode(s: string): string {
  return Array.from(Buffer.from(s, 'utf8'), (b) => {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) return c;
    if (c === ' ') return '+';
    return `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }).join('');
}

/** Encoding functions by name. */
export const ENCODING_FUNCTIONS: Readonly<Record<string, HclFunction>> = {
  base64encode: defineFunction(1, 1, ([s]) => Buffer.from(toStr(s!), 'utf8').toString('base64')),
  base64decode: defineFunction(1, 1, ([s]) => base64decode(toStr(s!))),
  csvdecode: defineFunction(1, 1, ([s]) => csvdecode(toStr(s!))),
  jsondecode: defineFunction(1, 1, ([s]) => jsonDecode(toStr(s!))),
  jsonencode: defineFunction(1, 1, ([v]) => jsonEncode(v!)),
  urlencode: defineFunction(1, 1, ([s]) => urlencode(toStr(s!))),
  yamldecode: defineFunction(1, 1, ([s]) => yamlDecode(toStr(s!))),
  yamlencode: defineFunction(1, 1, ([v]) => yamlEncode(v!)),
};
