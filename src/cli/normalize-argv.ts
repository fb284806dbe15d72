/**
 * Nomad's CLI takes long flags with one dash (`-address=…`, `-var k=v`); commander wants two.
 * Rewriting argv before parsing lets both spellings work.
 */

const LONG_SINGLE_DASH = /^-[A-Za-z][A-Za-z0-9_-]+(=[\s\S]*)?$/;

/**
 * Returns argv with every single-dash long flag (`-flag`, `-flag=v`) turned into `--flag…`.
 * Single-letter flags (`-h`), negative numbers and everything after a bare `--` are left alone.
 */
export function normalizeArgv(args: readonly string[]): string[] {
  const out: string[] = [];
  let passthrough = false;
  for (const a of args) {
    if (passthrough) {
      out.push(a);
    } else if (a === '--') {
      passthrough = true;
      out.push(a);
    } else if (LONG_SINGLE_DASH.test(a)) {
      out.push(`-${a}`);
    } else {
      out.push(a);
    }
  }
  return out;
}
