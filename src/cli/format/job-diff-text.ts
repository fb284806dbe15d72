/**
 * A job diff as Nomad's CLI prints it in `job plan` and `job history -p`:
 *
 *   +/- Job: "web"
 *   +/- Task Group: "api" (1 create/destroy update, 2 ignore)
 *     +/- Task: "server" (forces create/destroy update)
 *       +/- Config {
 *         +/- args[0]: "8080" => "9090"
 *           }
 *
 * Markers are `+` added, `-` deleted, `+/-` edited; names and values are aligned within a
 * block. Unchanged groups and tasks show their header only; without `verbose`, added and
 * deleted tasks too.
 */
import type { DiffType, FieldDiff, JobDiff, ObjectDiff, TaskDiff, TaskGroupDiff } from '../../structs/job-diff/diff-types.js';

function marker(type: DiffType): string {
  return type === 'Added' ? '+ ' : type === 'Deleted' ? '- ' : type === 'Edited' ? '+/- ' : '';
}

function quote(value: string): string {
  return JSON.stringify(value);
}

function longestPrefixes(fields: readonly FieldDiff[], objects: readonly ObjectDiff[]): { field: number; marker: number } {
  let field = 0;
  let mark = 0;
  for (const f of fields) {
    field = Math.max(field, f.Name.length);
    mark = Math.max(mark, marker(f.Type).length);
  }
  for (const o of objects) mark = Math.max(mark, marker(o.Type).length);
  return { field, marker: mark };
}

function formatField(f: FieldDiff, start: number, keyPad: number, valuePad: number): string {
  const value = f.Type === 'Added' ? quote(f.New) : f.Type === 'Deleted' ? quote(f.Old) : f.Type === 'Edited' ? `${quote(f.Old)} => ${quote(f.New)}` : quote(f.New);
  const notes = f.Annotations && f.Annotations.length > 0 ? ` (${f.Annotations.join(', ')})` : '';
  return `${' '.repeat(start)}${marker(f.Type)}${' '.repeat(keyPad)}${f.Name}: ${' '.repeat(valuePad)}${value}${notes}`;
}

function formatObject(o: ObjectDiff, start: number, keyPad: number): string {
  const head = `${' '.repeat(start)}${marker(o.Type)}${' '.repeat(keyPad)}${o.Name} {\n`;
  const widths = longestPrefixes(o.Fields ?? [], o.Objects ?? []);
  const body = alignedFieldsAndObjects(o.Fields ?? [], o.Objects ?? [], start + keyPad + 2, widths.field, widths.marker);
  return `${head}${body}\n${' '.repeat(start + marker(o.Type).length + keyPad)}}`;
}

function alignedFieldsAndObjects(fields: readonly FieldDiff[], objects: readonly ObjectDiff[], start: number, longestField: number, longestMarker: number): string {
  let out = '';
  fields.forEach((f, i) => {
    out += formatField(f, start, longestMarker - marker(f.Type).length, longestField - f.Name.length);
    if (i + 1 !== fields.length || objects.length > 0) out += '\n';
  });
  objects.forEach((o, i) => {
    out += formatObject(o, start, longestMarker - marker(o.Type).length);
    if (i + 1 !== objects.length) out += '\n';
  });
  return out;
}

function formatTask(task: TaskDiff, start: number, taskPad: number, verbose: boolean): string {
  let out = `${' '.repeat(start)}${marker(task.Type)}${' '.repeat(taskPad)}Task: ${quote(task.Name)}`;
  if (task.Annotations && task.Annotations.length > 0) out += ` (${task.Annotations.join(', ')})`;
  if (task.Type === 'None' || ((task.Type === 'Added' || task.Type === 'Deleted') && !verbose)) return out;
  out += '\n';
  const widths = longestPrefixes(task.Fields ?? [], task.Objects ?? []);
  return out + alignedFieldsAndObjects(task.Fields ?? [], task.Objects ?? [], start + 2, widths.field, widths.marker);
}

function formatUpdates(updates: Record<string, number> | null): string {
  const kinds = Object.keys(updates ?? {}).sort();
  if (kinds.length === 0) return '';
  return ` (${kinds.map((k) => `${updates![k]} ${k}`).join(', ')})`;
}

function formatGroup(group: TaskGroupDiff, groupPad: number, verbose: boolean): string {
  let out = `${marker(group.Type)}${' '.repeat(groupPad)}Task Group: ${quote(group.Name)}${formatUpdates(group.Updates)}\n`;
  const widths = longestPrefixes(group.Fields ?? [], group.Objects ?? []);
  let longestMarker = widths.marker;
  for (const t of group.Tasks ?? []) longestMarker = Math.max(longestMarker, marker(t.Type).length);
  const start = groupPad + 2;
  if (group.Type === 'Edited' || verbose) {
    const fo = alignedFieldsAndObjects(group.Fields ?? [], group.Objects ?? [], start, widths.field, longestMarker);
    out += fo;
    if (fo.length > 0) out += '\n';
  }
  for (const t of group.Tasks ?? []) out += `${formatTask(t, start, longestMarker - marker(t.Type).length, verbose)}\n`;
  return out;
}

/** The whole diff; `verbose` also shows the fields of unchanged jobs and groups. */
export function formatJobDiff(diff: JobDiff, verbose: boolean): string {
  let out = `${marker(diff.Type)}Job: ${quote(diff.ID)}\n`;
  const widths = longestPrefixes(diff.Fields ?? [], diff.Objects ?? []);
  let longestMarker = widths.marker;
  for (const g of diff.TaskGroups ?? []) longestMarker = Math.max(longestMarker, marker(g.Type).length);
  if (diff.Type === 'Edited' || verbose) {
    const fo = alignedFieldsAndObjects(diff.Fields ?? [], diff.Objects ?? [], 0, widths.field, longestMarker);
    out += fo;
    if (fo.length > 0) out += '\n';
  }
  for (const g of diff.TaskGroups ?? []) out += `${formatGroup(g, longestMarker - marker(g.Type).length, verbose)}\n`;
  return out;
}
