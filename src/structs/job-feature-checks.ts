/**
 * Checks of the job features Nomad's jobspec has and Caravan handles in part: blocks Caravan
 * parses and keeps but does not run (Consul Connect, Consul, Vault, CSI plugins and CSI
 * volumes) are refused with a message that names the feature, so `job validate`, `job plan`
 * and registration explain instead of failing to parse; `max_run_duration` and task
 * `action` blocks are checked for what Caravan runs.
 */
import { JobType, type Job, type Task, type TaskGroup } from './job.js';

/** One problem, as job-validate collects them. */
export interface FeatureProblem {
  path: string;
  message: string;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Names of a group's CSI volumes, from the HCL shape (`{name: [{type}]}`) or the API shape (`{name: {Type}}`). */
function csiVolumes(g: TaskGroup): string[] {
  if (!isObject(g.Volumes)) return [];
  return Object.entries(g.Volumes)
    .filter(([, v]) => {
      const body = Array.isArray(v) ? v[0] : v;
      return isObject(body) && (body.Type === 'csi' || body.type === 'csi');
    })
    .map(([name]) => name);
}

function taskProblems(path: string, t: Task, jobType: string, out: FeatureProblem[]): void {
  if (t.Vault) out.push({ path: `${path}: vault`, message: 'Vault is not supported by Caravan: keep secrets in Caravan variables and read them with a template (nomadVar)' });
  if (t.Consul) out.push({ path: `${path}: consul`, message: 'Consul is not supported by Caravan: remove the consul block (services use provider = "nomad")' });
  if (t.CSIPluginConfig) out.push({ path: `${path}: csi_plugin`, message: 'CSI plugins are not supported by Caravan' });
  if (t.Schedule) out.push({ path: `${path}: schedule`, message: 'task schedules (Nomad Enterprise time-based execution) are not supported by Caravan' });
  for (const s of t.Secrets ?? []) {
    out.push({ path: `${path}: secret "${s.Name}"`, message: 'secret blocks (Nomad secret providers) are not supported by Caravan: read Caravan variables with a template (nomadVar)' });
  }
  for (const p of t.ScalingPolicies ?? []) {
    const label = p.Type === 'vertical_mem' ? 'mem' : 'cpu';
    out.push({ path: `${path}: scaling "${label}"`, message: 'task scaling policies (Nomad Enterprise dynamic application sizing) are not supported by Caravan' });
  }
  // Clients fingerprint no devices, so a request for one could never be placed.
  for (const d of t.Resources?.Devices ?? []) {
    const name = isObject(d) && typeof d.Name === 'string' ? d.Name : '';
    out.push({ path: `${path}: resources: device "${name}"`, message: 'devices (GPUs and other device plugins) are not supported by Caravan' });
  }
  for (const s of t.Services ?? []) {
    if (s.Connect) out.push({ path: `${path}: service "${s.Name}": connect`, message: 'Consul Connect is not supported by Caravan' });
  }
  if (t.MaxRunDuration !== undefined && t.MaxRunDuration !== null) {
    if (!Number.isInteger(t.MaxRunDuration) || t.MaxRunDuration <= 0) {
      out.push({ path, message: `max_run_duration must be a positive duration, got ${t.MaxRunDuration}` });
    } else if (jobType !== JobType.Batch && jobType !== JobType.SysBatch) {
      out.push({ path, message: `max_run_duration is only supported for batch and sysbatch jobs, not "${jobType}"` });
    }
  }
  const names = new Set<string>();
  for (const a of t.Actions ?? []) {
    const ap = `${path}: action "${a.Name}"`;
    if (a.Name === '' || /[\s/]/.test(a.Name)) out.push({ path: ap, message: 'action names must be non-empty, without spaces or "/"' });
    if (names.has(a.Name)) out.push({ path: ap, message: `duplicate action "${a.Name}"` });
    names.add(a.Name);
    if (a.Command === '') out.push({ path: ap, message: 'command is required' });
  }
}

/**
 * Every problem of the job's Nomad-only features, in document order. Pure; never throws on
 * odd values (the HTTP layer calls it on untrusted jobs after canonicalization).
 */
export function jobFeatureProblems(job: Job): FeatureProblem[] {
  const out: FeatureProblem[] = [];
  const path = `job "${job.ID}"`;
  // The token itself is a secret: the message names the field, never its value.
  if (job.ConsulToken) out.push({ path: `${path}: consul_token`, message: 'Consul is not supported by Caravan: remove consul_token' });
  for (const s of job.GroupSelections ?? []) {
    out.push({ path: `${path}: group_selection "${s.Name}"`, message: 'group_selection is not supported by Caravan: run the groups you want with their own counts' });
  }
  if (job.Multiregion) out.push({ path: `${path}: multiregion`, message: 'multiregion deployments (Nomad Enterprise) are not supported by Caravan' });
  if (job.VaultToken) out.push({ path: `${path}: vault_token`, message: 'Vault is not supported by Caravan: remove vault_token (keep secrets in Caravan variables)' });
  for (const g of job.TaskGroups) {
    const gp = `${path}: group "${g.Name}"`;
    if (g.Consul) out.push({ path: `${gp}: consul`, message: 'Consul is not supported by Caravan: remove the consul block (services use provider = "nomad")' });
    for (const name of csiVolumes(g)) out.push({ path: `${gp}: volume "${name}"`, message: 'CSI volumes are not supported by Caravan: use a host volume (type = "host")' });
    for (const s of g.Services ?? []) {
      if (s.Connect) out.push({ path: `${gp}: service "${s.Name}": connect`, message: 'Consul Connect is not supported by Caravan' });
    }
    if (g.MaxRunDuration !== undefined && g.MaxRunDuration !== null && (!Number.isInteger(g.MaxRunDuration) || g.MaxRunDuration <= 0)) {
      out.push({ path: gp, message: `max_run_duration must be a positive duration, got ${g.MaxRunDuration}` });
    }
    for (const t of g.Tasks) taskProblems(`${gp}: task "${t.Name}"`, t, job.Type, out);
  }
  return out;
}
