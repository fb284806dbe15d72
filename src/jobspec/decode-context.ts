/**
 * Shared state of one jobspec decode: the file's name and text (to point at lines) and the
 * problems found so far. Decoders keep going after a problem so the user sees all of them.
 */
import type { JobspecProblem } from './jobspec-error.js';

/** Collects problems of one file; `locate` maps a name to its line in the source text. */
export class DecodeContext {
  readonly problems: JobspecProblem[] = [];

  constructor(
    readonly file: string,
    readonly source: string,
  ) {}

  /**
   * Offset of the first `name` written as an attribute or block (`name =`, `name {`,
   * `name "label"`) at or after `from`, or of the block header `name "label"` when a label is
   * given; -1 when not found (e.g. JSON input).
   */
  offsetOf(name: string, from = 0, label?: string): number {
    const esc = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pattern = label !== undefined
      ? `(^|[^\\w.-])"?${esc}"?\\s*:?\\s*\\{?\\s*"${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"`
      : `(^|[^\\w.-])"?${esc}"?\\s*(=|:|\\{|")`;
    const re = new RegExp(pattern, 'g');
    re.lastIndex = Math.max(0, from);
    const m = re.exec(this.source);
    if (!m) return -1;
    return m.index + m[1]!.length;
  }

  /**
   * The problems in the order of their lines in the file (decoders finish inner blocks first
   * and hcl2json sorts keys, so the found order is not the written one); problems without a
   * line keep their order, after the others.
   */
  problemsInLineOrder(): JobspecProblem[] {
    return [...this.problems].sort((a, b) => (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER));
  }

  /** 1-based line of a character offset; undefined for -1. */
  lineAt(offset: number): number | undefined {
    if (offset < 0) return undefined;
    let line = 1;
    for (let i = 0; i < offset && i < this.source.length; i++) if (this.source.charCodeAt(i) === 10) line++;
    return line;
  }

  /**
   * Records a problem at `path`; `name`/`from` locate its line when possible (an attribute or
   * block name, or with `literal` any text such as `var.replicas`).
   */
  report(path: string, message: string, name?: string, from = 0, literal = false): void {
    const offset = name === undefined ? -1 : literal ? this.source.indexOf(name, from) : this.offsetOf(name, from);
    const line = this.lineAt(offset);
    this.problems.push({ file: this.file, path, message, ...(line !== undefined ? { line } : {}) });
  }
}
