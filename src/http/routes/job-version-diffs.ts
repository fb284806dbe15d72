/**
 * `GET /v1/job/:id/versions?diffs=true`: one contextual diff per version, each against the
 * next older version (the oldest has none), or — with `diff_version=N` or `diff_tag=NAME` —
 * every version against that one, as Nomad answers.
 */
import type { Job } from '../../structs/job.js';
import { diffJob, type JobDiff } from '../../structs/job-diff/index.js';
import { badRequest, notFound } from '../http-errors.js';
import { queryFlag, queryParam, type RawQuery } from '../query-options.js';

/** The `Diffs` of a versions answer; `versions` are newest first. Null when not asked for. */
export function versionDiffs(versions: readonly Job[], query: RawQuery): JobDiff[] | null {
  if (!queryFlag(query, 'diffs')) return null;
  const compareTo = comparedVersion(versions, query);
  const diffs: JobDiff[] = [];
  versions.forEach((newer, i) => {
    const older = compareTo ?? versions[i + 1];
    if (older) diffs.push(diffJob(older, newer, true));
  });
  return diffs.length === 0 ? null : diffs;
}

function comparedVersion(versions: readonly Job[], query: RawQuery): Job | undefined {
  const tag = queryParam(query, 'diff_tag');
  if (tag !== undefined && tag !== '') {
    const tagged = versions.find((v) => v.VersionTag?.Name === tag);
    if (!tagged) throw notFound(`tag "${tag}"`);
    return tagged;
  }
  const raw = queryParam(query, 'diff_version');
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d+$/.test(raw)) throw badRequest(`invalid value for "diff_version": ${JSON.stringify(raw)} (want a version number)`);
  const version = versions.find((v) => v.Version === Number(raw));
  if (!version) throw notFound(`version ${raw}`);
  return version;
}
