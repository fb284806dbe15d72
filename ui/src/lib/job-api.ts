/** Job reads and actions shared by the job pages. */
import type { StreamEvent } from '../../../src/server/events/event.js';
import type { AllocListStub } from '../../../src/structs/alloc.js';
import type { Job, JobSummary } from '../../../src/structs/job.js';
import { apiGet, apiWrite, withQuery } from './api.js';
import { seg } from './format.js';

/** `/v1/job/<id>/<sub>?namespace=<ns>`. */
export function jobPath(id: string, ns: string, sub = ''): string {
  return withQuery(`/v1/job/${seg(id)}${sub ? `/${sub}` : ''}`, { namespace: ns });
}

/** Events about one job: the job itself and its allocations, evaluations and deployments. */
export function jobWatch(id: string, ns: string): (ev: StreamEvent) => boolean {
  return (ev) => {
    const p = ev.Payload as Partial<Record<'Job' | 'Allocation' | 'Evaluation' | 'Deployment', { ID: string; JobID?: string; Namespace: string }>>;
    const obj = p.Job ?? p.Allocation ?? p.Evaluation ?? p.Deployment;
    if (!obj) return false;
    const jobId = ev.Topic === 'Job' ? obj.ID : obj.JobID;
    return jobId === id && obj.Namespace === ns;
  };
}

/** How many allocations a job's summary counts (all client statuses; queued ones are not allocations yet). */
export function allocationTotal(summary: JobSummary): number {
  let n = 0;
  for (const g of Object.values(summary.Summary)) n += g.Starting + g.Running + g.Complete + g.Failed + g.Lost + g.Unknown;
  return n;
}

/** Registers a job: `{Job}` to /v1/jobs. */
export function registerJob(job: Job): Promise<{ EvalID: string }> {
  return apiWrite('PUT', withQuery('/v1/jobs', { namespace: job.Namespace }), { Job: job });
}

/** Reads the job as stored and registers it changed by `edit` (start: Stop = false). */
export async function updateJob(id: string, ns: string, edit: (job: Job) => void): Promise<{ EvalID: string }> {
  const { data: job } = await apiGet<Job>(jobPath(id, ns));
  edit(job);
  return registerJob(job);
}

export function stopJob(id: string, ns: string, purge = false): Promise<{ EvalID: string }> {
  return apiWrite('DELETE', withQuery(jobPath(id, ns), { purge: purge || undefined }));
}

/** Restarts every running allocation of a job in place (`nomad job restart`'s default). */
export async function restartJob(id: string, ns: string): Promise<number> {
  const { data: allocs } = await apiGet<AllocListStub[]>(jobPath(id, ns, 'allocations'));
  const running = allocs.filter((a) => a.ClientStatus === 'running');
  for (const a of running) await apiWrite('POST', `/v1/client/allocation/${a.ID}/restart`, {});
  return running.length;
}

/** Base64 of a UTF-8 string (dispatch payloads, exec stdin). */
export function utf8ToBase64(s: string): string {
  return bytesToBase64(new TextEncoder().encode(s));
}

export function bytesToBase64(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function base64ToBytes(b64: string): Uint8Array {
  const bin = atob(b64);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}
