/**
 * Finding a job by ID or prefix, as Nomad's CLI does: an exact ID wins, a unique prefix is
 * accepted, several matches are listed.
 */
import type { JobListStub } from '../../structs/job.js';
import type { ApiClient } from '../api-client.js';
import { formatColumns } from '../format/columns.js';
import { PrefixError } from './api-command.js';

/** The full job ID for `prefix`; PrefixError when none or several jobs match. */
export async function resolveJobId(api: ApiClient, prefix: string): Promise<string> {
  const { body } = await api.get<JobListStub[]>('/v1/jobs', { prefix });
  const exact = body.find((j) => j.ID === prefix);
  if (exact) return exact.ID;
  if (body.length === 1) return body[0]!.ID;
  if (body.length === 0) throw new PrefixError(`No job(s) with prefix or id "${prefix}" found`);
  const rows = [['ID', 'Type', 'Priority', 'Status'], ...body.map((j) => [j.ID, j.Type, String(j.Priority), j.Status])];
  throw new PrefixError(`Prefix matched multiple jobs\n\n${formatColumns(rows)}`);
}
