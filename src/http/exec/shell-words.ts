/**
 * Small facts about a command line as sh and exec see it: quoting, whether a command resolves
 * as a direct spawn would resolve it, and the PWD a direct spawn would leave.
 */
import { accessSync, constants as fsConstants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Quotes `word` for sh: single quotes, with embedded single quotes spliced in. */
export function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * True when `file` will be found as the cold path finds it: a path that exists and is
 * executable, or a name on the environment's PATH. Anything else takes the cold path, whose
 * spawn error ("failed to exec …: ENOENT") is what callers see for a missing command.
 */
export function resolvable(file: string, env: Record<string, string>): boolean {
  const executable = (p: string): boolean => {
    try {
      accessSync(p, fsConstants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (file.includes('/')) return executable(file);
  if (env.PATH === undefined || file === '') return false;
  return env.PATH.split(delimiter).some((dir) => dir !== '' && executable(join(dir, file)));
}

/** sh sets PWD for itself; this puts back what a direct spawn gives the command. */
export function pwdLine(env: Record<string, string>): string {
  return env.PWD === undefined ? 'unset PWD' : `export PWD=${shellQuote(env.PWD)}`;
}
