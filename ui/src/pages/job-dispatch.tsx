/** Dispatching a parameterized job: meta (key=value lines) and an optional payload. */
import { useState } from 'preact/hooks';
import type { Job } from '../../../src/structs/job.js';
import { ActionButton } from '../components/action-button.js';
import { apiWrite } from '../lib/api.js';
import { nsQuery, seg } from '../lib/format.js';
import { jobPath, utf8ToBase64 } from '../lib/job-api.js';
import { navigate } from '../lib/router.js';
import { useDenied } from '../lib/session.js';

/** "k=v" lines → a map; throws naming the bad line. */
export function parseMeta(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    const eq = line.indexOf('=');
    if (eq <= 0) throw new Error(`meta line ${i + 1}: want key=value, got ${JSON.stringify(line)}`);
    out[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  });
  return out;
}

export function DispatchForm({ job }: { job: Job }) {
  const [meta, setMeta] = useState('');
  const [payload, setPayload] = useState('');
  const cfg = job.ParameterizedJob;
  const denied = useDenied();
  return (
    <section aria-labelledby="dispatch-title">
      <h2 id="dispatch-title">Dispatch</h2>
      <form class="card" onSubmit={(e) => e.preventDefault()}>
        <p class="muted">
          Payload: {cfg?.Payload || 'optional'}. Required meta: {cfg?.MetaRequired?.join(', ') || 'none'}. Optional meta: {cfg?.MetaOptional?.join(', ') || 'none'}.
        </p>
        <label>
          Meta (one key=value per line)
          <textarea class="editor" style={{ minHeight: '60px' }} value={meta} onInput={(e) => setMeta(e.currentTarget.value)} />
        </label>
        <label>
          Payload
          <textarea class="editor" style={{ minHeight: '80px' }} value={payload} onInput={(e) => setPayload(e.currentTarget.value)} />
        </label>
        <ActionButton
          label="Dispatch"
          primary
          deniedBy={denied(job.Namespace, 'dispatch-job')}
          run={() =>
            apiWrite<{ DispatchedJobID: string }>('PUT', jobPath(job.ID, job.Namespace, 'dispatch'), {
              Meta: parseMeta(meta),
              ...(payload ? { Payload: utf8ToBase64(payload) } : {}),
            })
          }
          onDone={(r) => navigate(`/jobs/${seg((r as { DispatchedJobID: string }).DispatchedJobID)}${nsQuery(job.Namespace)}`)}
        />
      </form>
    </section>
  );
}
