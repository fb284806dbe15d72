/**
 * Colour on a terminal, as Nomad's CLI: bold section titles, green/red/yellow plan diff markers
 * and dry-run verdicts. On only when stdout is a terminal; `-no-color` or NOMAD_CLI_NO_COLOR turn
 * it off, `-force-color` or NOMAD_CLI_FORCE_COLOR turn it on even into a pipe. Formatters print
 * plain text; a command colours it last, so -json and piped output never carry escapes.
 */
import type { CliContext } from '../cli-context.js';

/** The flags that decide colour (added to every API command by addGlobalFlags). */
export interface ColorFlags {
  /** false with `-no-color` (commander's negatable option). */
  color?: boolean;
  forceColor?: boolean;
}

/** How text is styled: identity functions when colour is off. */
export interface Style {
  readonly enabled: boolean;
  bold(s: string): string;
  green(s: string): string;
  red(s: string): string;
  yellow(s: string): string;
}

const sgr = (code: string) => (s: string) => `\x1b[${code}m${s}\x1b[0m`;
const plain = (s: string) => s;

const COLOR: Style = { enabled: true, bold: sgr('1'), green: sgr('32'), red: sgr('31'), yellow: sgr('93') };
const NO_COLOR: Style = { enabled: false, bold: plain, green: plain, red: plain, yellow: plain };

/** Whether a command run with `flags` in `ctx` prints colour (see the file comment). */
export function colorEnabled(ctx: Pick<CliContext, 'stdout' | 'env'>, flags: ColorFlags): boolean {
  if (flags.forceColor || ctx.env.NOMAD_CLI_FORCE_COLOR) return true;
  if (flags.color === false || ctx.env.NOMAD_CLI_NO_COLOR) return false;
  return (ctx.stdout as { isTTY?: boolean }).isTTY === true;
}

/** The style of a command run with `flags` in `ctx`. */
export function styleFor(ctx: Pick<CliContext, 'stdout' | 'env'>, flags: ColorFlags): Style {
  return colorEnabled(ctx, flags) ? COLOR : NO_COLOR;
}

/** Bolds the lines of `text` that are one of the section `titles` (a string equals the line; a RegExp matches it). */
export function boldTitles(text: string, style: Style, titles: readonly (string | RegExp)[]): string {
  if (!style.enabled) return text;
  return text
    .split('\n')
    .map((line) => (titles.some((t) => (typeof t === 'string' ? line === t : t.test(line))) ? style.bold(line) : line))
    .join('\n');
}

/** Colours the markers of a job diff (format/job-diff-text.ts): `+` green, `-` red, `+/-` yellow, as Nomad's plan. */
export function colorDiffMarkers(text: string, style: Style): string {
  if (!style.enabled) return text;
  return text.replace(/^(\s*)(\+\/-|\+|-)(?= )/gm, (_m, indent: string, mark: string) => indent + (mark === '+' ? style.green(mark) : mark === '-' ? style.red(mark) : style.yellow(mark)));
}
