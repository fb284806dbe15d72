/**
 * Where a client finds the introduction token it presents when it first registers: the one the
 * agent was given (-client-intro-token or NOMAD_CLIENT_INTRO_TOKEN), else the file
 * `intro_token.jwt` in the client's data dir (Nomad's `<state_dir>/intro_token.jwt`), which an
 * operator or a provisioning tool writes before the agent starts. The token is a secret: it is
 * read, sent, and never logged.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The file name Nomad reads the token from, in the client's state dir. */
export const INTRO_TOKEN_FILE = 'intro_token.jwt';

/** The token to present: `given` when set, else the file's content; undefined when neither has one. */
export function loadIntroToken(clientDataDir: string, given: string | undefined): string | undefined {
  if (given !== undefined && given.trim() !== '') return given.trim();
  let text: string;
  try {
    text = readFileSync(join(clientDataDir, INTRO_TOKEN_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const token = text.trim();
  return token === '' ? undefined : token;
}
