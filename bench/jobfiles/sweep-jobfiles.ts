/**
 * Sweeps a directory of job files through Caravan's parser, as `PUT /v1/jobs/parse` with
 * Canonicalize would (parse, then Nomad's defaults), and prints one line per file and the
 * failures counted by cause. Used to check that the job files Nomad itself ships parse here.
 *
 *   node dist/bench/jobfiles/sweep-jobfiles.js <dir> [-validate] [-json]
 *
 * A file `<name>.vars` beside a job file holds `-var` flags (one `k=v` a line) for the files
 * Nomad's own tests parse with variables. `-validate` also runs registration's validation,
 * which refuses features Caravan keeps but does not run (connect, vault, CSI...).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseJobspec, JobspecParseError } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { assertValidJob } from '../../src/structs/job-validate.js';
import type { Job } from '../../src/structs/job.js';

interface SweepResult {
  file: string;
  ok: boolean;
  cause?: string;
  message?: string;
  groups?: string;
}

const JOB_FILE = /\.(hcl|nomad)$/;

async function listJobFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listJobFiles(p)));
    else if (JOB_FILE.test(entry.name)) out.push(p);
  }
  return out.sort();
}

async function varsFor(file: string): Promise<string[]> {
  try {
    const text = await readFile(file.replace(JOB_FILE, '.vars'), 'utf8');
    return text.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
  } catch {
    return [];
  }
}

/** A message with its file-specific names taken out, so that like failures count together. */
function causeOf(message: string): string {
  return message
    .replace(/^[^:]*:\d+(:\d+)?: /, '')
    .replace(/"[^"]*"/g, '"…"')
    .replace(/\b\d+\b/g, 'N')
    .slice(0, 120);
}

/** Group name=count and what a reader comparing with Nomad wants to see at a glance. */
function groupSummary(job: Job): string {
  return job.TaskGroups.map((g) => {
    const parts = [`${g.Name}=${g.Count}`];
    if (g.Scaling) parts.push(`scaling[${g.Scaling.Min ?? ''}..${g.Scaling.Max ?? ''}]`);
    const vols = Object.keys(g.Volumes ?? {});
    if (vols.length > 0) parts.push(`volumes[${vols.join(',')}]`);
    return parts.join(' ');
  }).join('; ');
}

async function sweepOne(file: string, root: string, validate: boolean): Promise<SweepResult> {
  const name = relative(root, file);
  try {
    const source = await readFile(file, 'utf8');
    const draft = await parseJobspec(source, { filename: name, vars: await varsFor(file) });
    const job = canonicalizeJob(draft);
    if (validate) assertValidJob(job);
    return { file: name, ok: true, groups: groupSummary(job) };
  } catch (err) {
    const message = err instanceof JobspecParseError
      ? err.problems.map((p) => p.message).join(' | ')
      : err instanceof Error ? err.message : String(err);
    const first = err instanceof JobspecParseError ? (err.problems[0]?.message ?? message) : message;
    return { file: name, ok: false, cause: causeOf(first), message };
  }
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dir = args.find((a) => !a.startsWith('-'));
  if (!dir) {
    process.stderr.write('usage: sweep-jobfiles <dir> [-validate] [-json]\n');
    process.exitCode = 2;
    return;
  }
  const results: SweepResult[] = [];
  for (const f of await listJobFiles(dir)) results.push(await sweepOne(f, dir, args.includes('-validate')));
  if (args.includes('-json')) {
    process.stdout.write(JSON.stringify(results, null, 2) + '\n');
    return;
  }
  for (const r of results) process.stdout.write(r.ok ? `ok   ${r.file}  ${r.groups}\n` : `FAIL ${r.file}  ${r.message}\n`);
  const causes = new Map<string, number>();
  for (const r of results) if (!r.ok) causes.set(r.cause!, (causes.get(r.cause!) ?? 0) + 1);
  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(`\n${results.length} files, ${results.length - failed} parse, ${failed} fail\n`);
  for (const [cause, n] of [...causes].sort((a, b) => b[1] - a[1])) process.stdout.write(`${String(n).padStart(4)}  ${cause}\n`);
}

void main();
