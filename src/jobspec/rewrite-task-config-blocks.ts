/**
 * A task's driver `config` decoded as Nomad's jobspec2 decodes it: the body has no schema, so
 * its nested blocks become attributes (jobspec2's hclutil.BlocksAsAttrs). Blocks of one type
 * become one list, in source order; each block is a map, wrapped in one single-key map per
 * label, outermost label first, each holding a one-element list:
 *
 *   label_repeated "l2" "l21" { a = 3 }   →   label_repeated = [{ l2 = [{ l21 = [{ a = 3 }] }] }]
 *
 * and an attribute written as an object (`m = { k = "v" }`, not a `for` expression) becomes a
 * one-element list of it (`[{ k = "v" }]`), HCL1's shape, which Nomad's drivers accept.
 *
 * This is done on the source text, before hcl2json, because hcl2json folds labelled blocks into
 * nested maps and cannot represent one block type with different numbers of labels. Everything
 * outside task `config` blocks is left byte for byte, and the rewritten block keeps its number
 * of lines, so line numbers in messages stay right.
 */
import { outlineHclBody, type OutlineAttribute, type OutlineBlock, type OutlineItem } from './hcl-body-outline.js';
import { HclEvalError } from './hcl2/hcl-eval-error.js';

/** An object key or a label as an HCL quoted string whose text is literal (no templates). */
function quotedKey(text: string): string {
  return `"${text.replace(/(?<!\$)\$\{/g, '$${').replace(/(?<!%)%\{/g, '%%{')}"`;
}

function plainKey(name: string): string {
  return JSON.stringify(name);
}

/** True when an expression's text is an object constructor (a `{ for … }` is not one). */
function isObjectConstructor(expr: string): boolean {
  if (!expr.startsWith('{')) return false;
  return !/^\{\s*for(?![A-Za-z0-9_-])/.test(expr);
}

class ConfigRenderer {
  constructor(private readonly src: string) {}

  private exprText(a: OutlineAttribute): string {
    const text = this.src.slice(a.exprStart, a.exprEnd);
    return isObjectConstructor(text) ? `[${text}]` : text;
  }

  /** `name = value` items of a body: attributes, then each block type as one list. */
  items(body: readonly OutlineItem[], key: (name: string) => string): { lines: string[]; heredocLast: boolean } {
    const lines: string[] = [];
    const groups = new Map<string, OutlineBlock[]>();
    const order: (OutlineAttribute | string)[] = [];
    for (const item of body) {
      if (item.kind === 'attribute') {
        order.push(item);
        continue;
      }
      const group = groups.get(item.type);
      if (group) {
        group.push(item);
      } else {
        groups.set(item.type, [item]);
        order.push(item.type);
      }
    }
    let heredocLast = false;
    for (const entry of order) {
      if (typeof entry === 'string') {
        lines.push(`${key(entry)} = [${groups.get(entry)!.map((b) => this.block(b)).join(', ')}]`);
        heredocLast = false;
      } else {
        const text = this.exprText(entry);
        lines.push(`${key(entry.name)} = ${text}`);
        // A heredoc's closing marker must end its line, so what follows it starts a new one.
        heredocLast = /^<<-?[A-Za-z_]/.test(text);
      }
    }
    return { lines, heredocLast };
  }

  private block(b: OutlineBlock): string {
    const { lines, heredocLast } = this.items(b.body, plainKey);
    let value = `{${lines.join('\n')}${heredocLast ? '\n' : ''}}`;
    for (let i = b.labels.length - 1; i >= 0; i--) value = `{${quotedKey(b.labels[i]!)} = [${value}]}`;
    return value;
  }
}

function countNewlines(s: string): number {
  let n = 0;
  for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) n++;
  return n;
}

/** The new text between a config block's braces, with at least as many lines as before. */
function renderConfigBody(src: string, block: OutlineBlock): string {
  const { lines, heredocLast } = new ConfigRenderer(src).items(block.body, (name) => name);
  const before = src.slice(block.bodyStart, block.bodyEnd);
  const text = lines.join('\n');
  if (lines.length === 1 && !heredocLast && !text.includes('\n') && !before.includes('\n')) return ` ${text} `;
  const pad = Math.max(0, countNewlines(before) - countNewlines(text) - 2);
  return `\n${text}\n${'\n'.repeat(pad)}`;
}

/** Whether a config body needs rewriting: it has a nested block or an object-valued attribute. */
function needsRewrite(src: string, body: readonly OutlineItem[]): boolean {
  return body.some((item) => item.kind === 'block' || isObjectConstructor(src.slice(item.exprStart, item.exprEnd)));
}

/** The `config` blocks of tasks, including tasks a `dynamic "task"` generates. */
function taskConfigBlocks(items: readonly OutlineItem[], parent: OutlineBlock | undefined, grandparent: OutlineBlock | undefined, out: OutlineBlock[]): void {
  const inTask = parent?.type === 'task' || (parent?.type === 'content' && grandparent?.type === 'dynamic' && grandparent.labels[0] === 'task');
  for (const item of items) {
    if (item.kind !== 'block') continue;
    if (inTask && item.type === 'config' && item.labels.length === 0) {
      out.push(item);
      continue;
    }
    taskConfigBlocks(item.body, item, parent, out);
  }
}

/**
 * The job file's text with each task `config` block's nested blocks and object attributes
 * written as jobspec2 decodes them (see the module comment). A config holding a `dynamic`
 * block is left as it is, as is a file whose structure cannot be followed (hcl2json then
 * reports its syntax error).
 */
export function rewriteTaskConfigBlocks(src: string): string {
  let outline: OutlineItem[];
  try {
    outline = outlineHclBody(src);
  } catch (err) {
    if (err instanceof HclEvalError) return src;
    throw err;
  }
  const configs: OutlineBlock[] = [];
  taskConfigBlocks(outline, undefined, undefined, configs);
  let out = '';
  let from = 0;
  for (const block of configs) {
    if (!needsRewrite(src, block.body)) continue;
    if (block.body.some((item) => item.kind === 'block' && item.type === 'dynamic')) continue;
    out += src.slice(from, block.bodyStart) + renderConfigBody(src, block);
    from = block.bodyEnd;
  }
  return out + src.slice(from);
}
