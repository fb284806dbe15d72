/**
 * Job version tags (Nomad's Job.TagVersion): a name and description given to one version of a
 * job, so an operator can find it again (`caravan job tag apply`, GET /v1/job/:id/versions). A
 * name tags at most one version of a job; re-tagging the version that carries it updates the
 * description. Every refusal changes nothing.
 */
import { ServerError } from '../server-error.js';
import type { EndpointContext } from './endpoint-context.js';

const MAX_NAME = 128;
const MAX_DESCRIPTION = 1000;

export class VersionTagEndpoint {
  constructor(private readonly ctx: EndpointContext) {}

  /** Tags `version` (the current one when undefined) of a job with `name`. */
  async tagVersion(namespace: string, jobId: string, name: string, version: number | undefined, description: string): Promise<{ index: number }> {
    const { store } = this.ctx;
    const job = store.jobById(namespace, jobId);
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (name.trim() === '') throw new ServerError('JOB_VERSION_TAG_INVALID', { reason: 'tag name must not be empty' });
    if (name.length > MAX_NAME) throw new ServerError('JOB_VERSION_TAG_INVALID', { reason: `tag name longer than ${MAX_NAME} characters` });
    if (description.length > MAX_DESCRIPTION) throw new ServerError('JOB_VERSION_TAG_INVALID', { reason: `tag description longer than ${MAX_DESCRIPTION} characters` });
    const v = version ?? job.Version;
    const versions = store.jobVersions(namespace, jobId);
    if (!versions.some((x) => x.Version === v)) throw new ServerError('JOB_VERSION_NOT_FOUND', { job: jobId, namespace, version: v });
    const holder = versions.find((x) => x.VersionTag?.Name === name);
    if (holder && holder.Version !== v) {
      throw new ServerError('JOB_VERSION_TAG_INVALID', { reason: `tag "${name}" already exists on a different version of the job (version ${holder.Version})` });
    }
    const now = this.ctx.nowNanos();
    const index = await this.ctx.apply({ Type: 'JobVersionTag', Namespace: namespace, JobID: jobId, Name: name, Version: v, Tag: { Name: name, Description: description, TaggedTime: now }, Now: now });
    return { index };
  }

  /** Removes the tag `name` from the version carrying it (404 when none does). */
  async untagVersion(namespace: string, jobId: string, name: string): Promise<{ index: number }> {
    const { store } = this.ctx;
    if (!store.jobById(namespace, jobId)) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    const holder = store.jobVersions(namespace, jobId).find((x) => x.VersionTag?.Name === name);
    if (!holder) throw new ServerError('JOB_VERSION_TAG_NOT_FOUND', { tag: name, job: jobId });
    const index = await this.ctx.apply({ Type: 'JobVersionTag', Namespace: namespace, JobID: jobId, Name: name, Version: holder.Version, Tag: null, Now: this.ctx.nowNanos() });
    return { index };
  }
}
