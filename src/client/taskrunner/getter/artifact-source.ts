/**
 * What an artifact's `source` may name. Nomad fetches artifacts with go-getter in a sandbox
 * confined to the allocation directory, with the getters git, hg, s3, gcs, http and https and
 * no `file` getter; Caravan fetches the two it implements, http and https, and copies paths
 * inside the allocation. Nothing else on the client host is reachable: `file://` URLs,
 * absolute paths, `..` climbing out, and every other scheme or forced getter are refused with
 * an error naming the source.
 */
import { posix } from 'node:path';
import { CaravanError } from '../../../structs/caravan-error.js';

/** The URL schemes Caravan downloads artifacts from. */
export const ARTIFACT_URL_SCHEMES: readonly string[] = ['http', 'https'];

/** go-getter's other getters, known but not implemented here (refused with a message saying so). */
const UNSUPPORTED_GETTERS: readonly string[] = ['git', 'hg', 's3', 'gcs', 'file'];

/** An artifact source Caravan refuses to fetch; the message names the source and why. */
export class ArtifactSourceError extends CaravanError<'ARTIFACT_SOURCE_REFUSED'> {
  constructor(source: string, reason: string) {
    super('ARTIFACT_SOURCE_REFUSED', { source: JSON.stringify(source), reason });
    this.name = 'ArtifactSourceError';
  }
}

/** Which allocation directory a local source is read from. */
export const LocalRoot = { Task: 'task', Alloc: 'alloc' } as const;
export type LocalRoot = (typeof LocalRoot)[keyof typeof LocalRoot];

/** A source Caravan fetches: a URL, or a path below the task's or the shared allocation directory. */
export type ArtifactSource =
  | { kind: 'url'; url: URL }
  | { kind: 'local'; root: LocalRoot; rel: string };

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const FORCED_GETTER = /^([A-Za-z0-9]+)::(.*)$/s;

function classifyUrl(source: string, text: string): ArtifactSource {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ArtifactSourceError(source, 'is not a valid URL');
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'file') {
    throw new ArtifactSourceError(source, 'file:// URLs would read the client host\'s files; use an http(s) URL or a path relative to the task directory');
  }
  if (!ARTIFACT_URL_SCHEMES.includes(scheme)) {
    throw new ArtifactSourceError(source, `scheme "${scheme}" is not supported (allowed: ${ARTIFACT_URL_SCHEMES.join(', ')}, or a path inside the allocation directory)`);
  }
  return { kind: 'url', url };
}

function classifyPath(source: string, path: string): ArtifactSource {
  if (path.includes('\0')) throw new ArtifactSourceError(source, 'path must not contain NUL bytes');
  if (path.startsWith('/') || path.startsWith('~')) {
    throw new ArtifactSourceError(source, 'absolute host paths are refused: a local source is a path relative to the task directory (e.g. "local/app.tgz" or "../alloc/data/app.tgz")');
  }
  // Relative to the task directory, whose parent is the allocation directory.
  const inAlloc = posix.normalize(posix.join('TASK', path));
  if (inAlloc === 'TASK' || inAlloc.startsWith('TASK/')) return { kind: 'local', root: LocalRoot.Task, rel: inAlloc.slice('TASK'.length).replace(/^\//, '') };
  if (inAlloc === 'alloc' || inAlloc.startsWith('alloc/')) return { kind: 'local', root: LocalRoot.Alloc, rel: inAlloc.slice('alloc'.length).replace(/^\//, '') };
  throw new ArtifactSourceError(source, 'path leaves the task directory (only the task directory and the shared ../alloc directory are readable)');
}

/**
 * Classifies an artifact source, or throws ArtifactSourceError. A go-getter forced getter
 * (`git::…`) must be http or https; a URL must have an allowed scheme; anything else is a path
 * relative to the task directory that must stay in it or in the shared `../alloc` directory.
 */
export function parseArtifactSource(source: string): ArtifactSource {
  if (source === '') throw new ArtifactSourceError(source, 'source must be specified');
  let text = source;
  const forced = FORCED_GETTER.exec(source);
  if (forced) {
    const getter = forced[1]!.toLowerCase();
    if (!ARTIFACT_URL_SCHEMES.includes(getter)) {
      const known = UNSUPPORTED_GETTERS.includes(getter) ? 'is not supported by Caravan' : 'is unknown';
      throw new ArtifactSourceError(source, `getter "${getter}" ${known} (allowed: ${ARTIFACT_URL_SCHEMES.join(', ')}, or a path inside the allocation directory)`);
    }
    text = forced[2]!;
    if (!SCHEME.test(text)) throw new ArtifactSourceError(source, `forced getter "${getter}" needs a URL`);
  }
  // Anything with a scheme ("file:/etc/passwd" too) is a URL, never a path.
  return SCHEME.test(text) ? classifyUrl(source, text) : classifyPath(source, text);
}
