/**
 * The job sources sent with registrations (Nomad's JobSubmission: the HCL or JSON text, its
 * format and variables), kept per job version for `GET /v1/job/:id/submission`. Like Nomad,
 * only the newest versions' sources are kept, and a source over 1 MiB is not kept at all.
 */

/** Nomad's JobSubmission. */
export interface JobSubmission {
  Source: string;
  Format: string;
  VariableFlags: Record<string, string> | null;
  Variables: string;
  Namespace: string;
  JobID: string;
  Version: number;
  JobModifyIndex: number;
}

/** What a registration carries; the rest is filled in when the version is known. */
export type SubmittedSource = Pick<JobSubmission, 'Source' | 'Format' | 'VariableFlags' | 'Variables'>;

/** Sources of at most this many bytes are kept (Nomad's limit). */
export const MAX_SUBMISSION_BYTES = 1024 * 1024;
/** Sources of this many newest versions are kept per job (Nomad's tracked versions). */
export const SUBMISSIONS_KEPT = 6;

const key = (namespace: string, id: string) => `${namespace}\u0000${id}`;

/** The kept sources, newest version last per job. */
export class JobSubmissions {
  private readonly byJob = new Map<string, JobSubmission[]>();

  put(s: JobSubmission): void {
    if (Buffer.byteLength(s.Source, 'utf8') > MAX_SUBMISSION_BYTES) return;
    const k = key(s.Namespace, s.JobID);
    const list = (this.byJob.get(k) ?? []).filter((x) => x.Version !== s.Version);
    list.push(s);
    this.byJob.set(k, list.slice(-SUBMISSIONS_KEPT));
  }

  get(namespace: string, jobId: string, version: number): JobSubmission | undefined {
    return this.byJob.get(key(namespace, jobId))?.find((s) => s.Version === version);
  }

  deleteJob(namespace: string, jobId: string): void {
    this.byJob.delete(key(namespace, jobId));
  }

  serialize(): JobSubmission[] {
    return [...this.byJob.values()].flat();
  }

  restore(all: readonly JobSubmission[] | undefined): void {
    this.byJob.clear();
    for (const s of all ?? []) this.put(s);
  }
}
