/**
 * Running a job from the browser: an HCL or JSON editor → parse (/v1/jobs/parse for HCL) →
 * plan (/v1/job/:id/plan: what the scheduler would do, placement failures, the change to the
 * current version) → run (/v1/jobs), then its evaluation and deployment as they progress.
 */
import { useState } from 'preact/hooks';
import type { StreamEvent } from '../../../src/server/events/event.js';
import type { AllocMetric } from '../../../src/structs/alloc.js';
import type { Evaluation } from '../../../src/structs/eval.js';
import type { Job } from '../../../src/structs/job.js';
import type { DesiredUpdates } from '../../../src/structs/plan.js';
import { PlacementFailures } from '../components/placement-failure.js';
import { ErrorBox, LiveView } from '../components/states.js';
import { StatusBadge } from '../components/summary-bar.js';
import { ApiError, apiGet, apiWrite, getNamespace } from '../lib/api.js';
import { changedOnly, diffLines, DiffView, jobLines } from '../lib/diff.js';
import { nsQuery, seg, shortId } from '../lib/format.js';
import { jobPath } from '../lib/job-api.js';
import { href } from '../lib/router.js';
import { useLive } from '../lib/use-live.js';
import { JobAllocations } from './job-detail.js';
import { DeploymentCard } from './job-overview.js';
import type { Deployment } from '../../../src/structs/deployment.js';

const SAMPLE = `job "example" {
  datacenters = ["*"]
  type        = "service"

  group "app" {
    count = 1

    task "hello" {
      driver = "raw_exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "while true; do echo hello from $NOMAD_ALLOC_ID; sleep 5; done"]
      }

      resources {
        cpu    = 50
        memory = 32
      }
    }
  }
}
`;

interface PlanAnswer {
  Annotations: { DesiredTGUpdates: Record<string, DesiredUpdates> } | null;
  FailedTGAllocs: Record<string, AllocMetric> | null;
  JobModifyIndex: number;
}

interface Planned {
  job: Job;
  plan: PlanAnswer;
  /** The version now registered, or null for a new job. */
  current: Job | null;
}

/** The job in the editor: JSON (`{"Job": …}` or a bare job) as is, HCL through the agent's parser. */
async function parseJob(text: string): Promise<Job> {
  const trimmed = text.trim();
  if (trimmed === '') throw new Error('the editor is empty: write a job in HCL or JSON');
  if (trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch (err) {
      throw new Error(`the JSON does not parse: ${(err as Error).message}`);
    }
    const obj = parsed as { Job?: Job };
    return (obj.Job ?? parsed) as Job;
  }
  return apiWrite<Job>('POST', '/v1/jobs/parse', { JobHCL: text, Canonicalize: true });
}

async function planJob(text: string): Promise<Planned> {
  const job = await parseJob(text);
  if (!job.ID) throw new Error('the job has no ID');
  const ns = job.Namespace || getNamespace().replace('*', 'default');
  const plan = await apiWrite<PlanAnswer>('PUT', jobPath(job.ID, ns, 'plan'), { Job: job, Diff: true });
  let current: Job | null = null;
  try {
    current = (await apiGet<Job>(jobPath(job.ID, ns))).data;
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  }
  return { job, plan, current };
}

const UPDATE_WORDS: Array<[keyof DesiredUpdates, string]> = [
  ['Place', 'place'],
  ['Canary', 'canary'],
  ['DestructiveUpdate', 'create/destroy update'],
  ['InPlaceUpdate', 'in-place update'],
  ['Migrate', 'migrate'],
  ['Stop', 'stop'],
  ['Ignore', 'ignore'],
  ['Preemptions', 'preempt'],
];

function PlanView({ planned }: { planned: Planned }) {
  const { job, plan, current } = planned;
  const groups = Object.entries(plan.Annotations?.DesiredTGUpdates ?? {});
  const diff = current ? changedOnly(diffLines(jobLines(current), jobLines({ ...current, ...job }))) : undefined;
  return (
    <section aria-labelledby="plan-title" data-testid="plan">
      <h2 id="plan-title">Plan for “{job.ID}”</h2>
      <p>{current ? `The job exists (version ${current.Version}); this changes it.` : 'This is a new job.'}</p>
      <table class="list" aria-label="Scheduler changes">
        <thead>
          <tr>
            <th scope="col">Group</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          {groups.map(([g, u]) => (
            <tr key={g}>
              <td>{g}</td>
              <td>
                {UPDATE_WORDS.filter(([k]) => u[k] > 0)
                  .map(([k, w]) => `${u[k]} ${w}`)
                  .join(', ') || 'no change'}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {plan.FailedTGAllocs && Object.keys(plan.FailedTGAllocs).length > 0 && <PlacementFailures failed={plan.FailedTGAllocs} />}
      {diff && (diff.some((l) => l !== '…') ? <DiffView lines={diff} /> : <p class="muted">The specification is unchanged.</p>)}
    </section>
  );
}

function Progress({ job, evalId }: { job: Job; evalId: string }) {
  const ns = job.Namespace || 'default';
  const ev = useLive<Evaluation>(`/v1/evaluation/${evalId}`, (e: StreamEvent) => e.Topic === 'Evaluation' && (e.Payload as { Evaluation: Evaluation }).Evaluation.ID === evalId);
  const dep = useLive<Deployment | null>(job.Type === 'service' ? jobPath(job.ID, ns, 'deployment') : undefined, ['Deployment']);
  return (
    <section aria-labelledby="progress-title" data-testid="run-progress">
      <h2 id="progress-title">
        Submitted <a href={href(`/jobs/${seg(job.ID)}${nsQuery(ns)}`)}>{job.ID}</a>
      </h2>
      <LiveView live={ev} what="evaluation">
        {(e) => (
          <>
            <p>
              Evaluation <span class="mono">{shortId(e.ID)}</span> <StatusBadge status={e.Status} /> {e.StatusDescription}
            </p>
            {e.FailedTGAllocs && Object.keys(e.FailedTGAllocs).length > 0 && <PlacementFailures failed={e.FailedTGAllocs} />}
          </>
        )}
      </LiveView>
      {job.Type === 'service' && dep.data && <DeploymentCard d={dep.data} />}
      <h3>Allocations</h3>
      <JobAllocations id={job.ID} ns={ns} />
    </section>
  );
}

export function JobRunPage() {
  const [text, setText] = useState(SAMPLE);
  const [busy, setBusy] = useState<'plan' | 'run' | undefined>(undefined);
  const [error, setError] = useState<Error | undefined>(undefined);
  const [planned, setPlanned] = useState<Planned | undefined>(undefined);
  const [submitted, setSubmitted] = useState<{ job: Job; evalId: string } | undefined>(undefined);

  const doPlan = async () => {
    setBusy('plan');
    setError(undefined);
    setPlanned(undefined);
    setSubmitted(undefined);
    try {
      setPlanned(await planJob(text));
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(undefined);
    }
  };
  const doRun = async () => {
    if (!planned) return;
    setBusy('run');
    setError(undefined);
    try {
      const ns = planned.job.Namespace || 'default';
      const res = await apiWrite<{ EvalID: string }>('PUT', `/v1/jobs${nsQuery(ns)}`, { Job: planned.job });
      setSubmitted({ job: planned.job, evalId: res.EvalID });
      setPlanned(undefined);
    } catch (err) {
      setError(err as Error);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <section aria-labelledby="run-title">
      <p class="crumbs">
        <a href={href('/jobs')}>Jobs</a>
      </p>
      <h1 id="run-title">Run a job</h1>
      <label for="jobspec">Job specification (HCL or JSON)</label>
      <textarea
        id="jobspec"
        class="editor"
        spellcheck={false}
        value={text}
        onInput={(e) => {
          setText(e.currentTarget.value);
          setPlanned(undefined);
        }}
      />
      <div class="actions" style={{ margin: '8px 0' }}>
        <button type="button" class="primary" disabled={busy !== undefined} onClick={() => void doPlan()}>
          {busy === 'plan' ? 'Planning…' : 'Plan'}
        </button>
        <button type="button" disabled={!planned || busy !== undefined} onClick={() => void doRun()}>
          {busy === 'run' ? 'Running…' : 'Run'}
        </button>
      </div>
      {error && <ErrorBox error={error} />}
      {planned && <PlanView planned={planned} />}
      {submitted && <Progress job={submitted.job} evalId={submitted.evalId} />}
    </section>
  );
}
