/**
 * Nomad's field diff of two job versions (the `Diffs` of /v1/job/:id/versions?diffs=true), as
 * its UI and `nomad job history -p` show it: `+` added, `-` deleted, `+/-` edited, nested by
 * job, task group, task and block, each field as `Name: "old" => "new"`. Unchanged fields and
 * blocks of the contextual diff are left out.
 */
import type { ComponentChildren } from 'preact';
import type { DiffType, FieldDiff, JobDiff, ObjectDiff } from '../../../src/structs/job-diff/diff-types.js';

const MARK: Record<DiffType, string> = { Added: '+', Deleted: '-', Edited: '+/-', None: '' };

function changed<T extends { Type: DiffType }>(items: T[] | null | undefined): T[] {
  return (items ?? []).filter((i) => i.Type !== 'None');
}

function Field({ f }: { f: FieldDiff }) {
  const value = f.Type === 'Added' ? `"${f.New}"` : f.Type === 'Deleted' ? `"${f.Old}"` : `"${f.Old}" => "${f.New}"`;
  return (
    <li class={`diff-${f.Type.toLowerCase()}`} data-testid="diff-field">
      <span class="diff-mark">{MARK[f.Type]}</span> {f.Name}: {value}
      {f.Annotations?.length ? <span class="muted"> ({f.Annotations.join(', ')})</span> : null}
    </li>
  );
}

function Block({ type, kind, name, children }: { type: DiffType; kind: string; name: string; children: ComponentChildren }) {
  return (
    <li class={`diff-${type.toLowerCase()}`}>
      <span class="diff-mark">{MARK[type]}</span> {kind} {name && `"${name}"`} {'{'}
      <ul class="diff-tree">{children}</ul>
      {'}'}
    </li>
  );
}

function Objects({ objects }: { objects: ObjectDiff[] | null }) {
  return (
    <>
      {changed(objects).map((o, i) => (
        <Block key={`${o.Name}-${i}`} type={o.Type} kind={o.Name} name="">
          {changed(o.Fields).map((f) => (
            <Field key={f.Name} f={f} />
          ))}
          <Objects objects={o.Objects} />
        </Block>
      ))}
    </>
  );
}

/** True when the diff changes anything. */
export function diffChangesSomething(d: JobDiff): boolean {
  return d.Type !== 'None';
}

export function JobDiffView({ diff }: { diff: JobDiff }) {
  return (
    <ul class="diff-tree code" aria-label="Differences" data-testid="job-diff">
      <Block type={diff.Type} kind="Job" name={diff.ID}>
        {changed(diff.Fields).map((f) => (
          <Field key={f.Name} f={f} />
        ))}
        <Objects objects={diff.Objects} />
        {changed(diff.TaskGroups).map((g) => (
          <Block key={g.Name} type={g.Type} kind="Task Group" name={g.Name}>
            {changed(g.Fields).map((f) => (
              <Field key={f.Name} f={f} />
            ))}
            <Objects objects={g.Objects} />
            {changed(g.Tasks).map((t) => (
              <Block key={t.Name} type={t.Type} kind="Task" name={t.Name}>
                {changed(t.Fields).map((f) => (
                  <Field key={f.Name} f={f} />
                ))}
                <Objects objects={t.Objects} />
              </Block>
            ))}
          </Block>
        ))}
      </Block>
    </ul>
  );
}
