/**
 * The job answers of the API built in one place: the row of GET /v1/jobs (Nomad's JobListStub)
 * from a job and its summary. Routes answer full jobs as stored (they carry no secrets).
 */
import type { Job, JobListStub, JobSummary } from '../../structs/job.js';

/** The row of GET /v1/jobs for a job and its summary. */
export function jobListStub(job: Job, summary: JobSummary | undefined): JobListStub {
  return {
    ID: job.ID,
    ParentID: job.ParentID,
    Name: job.Name,
    Namespace: job.Namespace,
    Datacenters: job.Datacenters,
    NodePool: job.NodePool,
    Multiregion: null,
    Type: job.Type,
    Priority: job.Priority,
    Periodic: job.Periodic !== null && job.Periodic !== undefined && job.Periodic.Enabled,
    ParameterizedJob: job.ParameterizedJob !== null && job.ParameterizedJob !== undefined,
    Stop: job.Stop,
    Status: job.Status,
    StatusDescription: job.StatusDescription,
    JobSummary: summary ?? null,
    CreateIndex: job.CreateIndex,
    ModifyIndex: job.ModifyIndex,
    JobModifyIndex: job.JobModifyIndex,
    SubmitTime: job.SubmitTime,
    Meta: job.Meta,
  };
}
