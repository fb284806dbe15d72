/** Paths of the repository for tests compiled to dist/test/…: fixtures and examples live in the source tree. */
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';

/** The repository root (three levels above dist/test/<area>/). */
export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Absolute path of a file under the repository root. */
export function repoPath(...parts: string[]): string {
  return join(REPO_ROOT, ...parts);
}
