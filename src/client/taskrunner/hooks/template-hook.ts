/**
 * The template hook: before each start, renders the task's templates (embedded `data` or a
 * `source` file in the task directory) into their destinations inside the task directory with
 * their permissions, and adds `env = true` templates to the task's environment. Runs after the
 * env hook (templates read the task env) and the artifact hook (sources may be artifacts).
 * Anything the renderer cannot do fails the task setup with "Template failed: …".
 *
 * Templates that read Nomad variables fetch them from the servers under the task's workload
 * identity. As Nomad's template runner, the first render waits until every `nomadVar` it reads
 * exists (emitting a "Missing: …" Template event once), and while the task runs the hook
 * watches the variables it read: when a change re-renders a template to new content (held back
 * by the template's `wait` until the data is quiet), the file is rewritten and the changed
 * templates' change modes applied (template-change-modes.ts).
 */
import { relative } from 'node:path';
import { openInside } from '../../../fs/confined-fs.js';
import { writeFileInsideSync } from '../../../fs/confined-write.js';
import { TaskEventType } from '../../../structs/alloc.js';
import { nanosToMs } from '../../../structs/duration.js';
import type { Template } from '../../../structs/template.js';
import type { TaskVariableRead } from '../../../structs/task-variables.js';
import { errorMessage } from '../../client-error.js';
import { parseEnvFile } from '../../template/parse-env-file.js';
import { renderTemplateResult, TemplateRenderError, type RenderResult } from '../../template/render-template.js';
import { resolveInTaskDir } from '../../template/task-path.js';
import { Quiescence } from '../../template/quiescence.js';
import { TaskVariableCache } from '../../template/task-variable-cache.js';
import { buildTaskEnv } from '../../taskenv/task-env.js';
import { systemClock, type Clock, type RandomSource } from '../../../time/clock.js';
import { newTaskEvent } from '../task-event.js';
import type { PoststartHook, PrestartHook, ExitedHook, StopHook, PreKillHook, ShutdownHook, TaskHookRequest, TaskPrep } from '../interfaces.js';
import { TaskSetupError } from '../task-setup-error.js';
import { applyTemplateChanges } from './template-change-modes.js';
import { NO_HOST_ENV, type HostEnvLookup } from '../../taskenv/host-env.js';

/** How long one blocking read of the variables waits before asking again (well inside fetch's header timeout). */
const WATCH_WAIT_MS = 60 * 1000;
/** Pause after a failed watch (servers unreachable) before trying again. */
const WATCH_RETRY_MS = 2000;

async function readSource(t: Template, taskDir: string): Promise<string> {
  if (!t.SourcePath) return t.EmbeddedTmpl;
  resolveInTaskDir(taskDir, t.SourcePath, 'source');
  try {
    // Opened through the confinement check: the task may have made the source a link to a host file.
    const fh = await openInside(taskDir, t.SourcePath);
    try {
      return await fh.readFile('utf8');
    } finally {
      await fh.close();
    }
  } catch (err) {
    throw new Error(`cannot read source ${JSON.stringify(t.SourcePath)}: ${errorMessage(err)}`, { cause: err });
  }
}

/** Writes one rendered template to its destination with its permissions. */
function writeRendered(t: Template, taskDir: string, rendered: string): void {
  if (!t.DestPath) throw new Error('template has no destination');
  const dest = relative(taskDir, resolveInTaskDir(taskDir, t.DestPath, 'destination'));
  const mode = parseInt(t.Perms || '0644', 8);
  if (!Number.isInteger(mode)) throw new Error(`invalid perms ${JSON.stringify(t.Perms)}`);
  // Never through a link the task planted at the destination (the agent is root); mode set on every render.
  writeFileInsideSync(taskDir, dest, rendered, mode);
}

/**
 * A template's `wait` in ms: min (0 when unset) and max (four times min when unset, as
 * consul-template's); undefined when it holds nothing back.
 */
function quiescenceWait(t: Template): { minMs: number; maxMs: number } | undefined {
  if (!t.Wait) return undefined;
  const minMs = nanosToMs(t.Wait.Min ?? 0);
  const maxMs = t.Wait.Max !== null ? nanosToMs(t.Wait.Max) : 4 * minMs;
  return minMs > 0 || maxMs > 0 ? { minMs, maxMs } : undefined;
}

/** What the hook keeps between the first render and the watch. */
interface Rendering {
  taskDir: string;
  baseEnv: Record<string, string>;
  cache: TaskVariableCache;
  /** The text each template last rendered to. */
  texts: string[];
}

/** Renders templates into the task directory, exports `env = true` templates, and re-renders on variable changes. */
export class TemplateHook implements PrestartHook, PoststartHook, ExitedHook, StopHook, PreKillHook, ShutdownHook {
  readonly name = 'template';
  private rendering: Rendering | null = null;
  private watcher: AbortController | null = null;

  /**
   * `hostEnv`: the agent's environment (through the client's env.denylist), for rebuilding the task env after a reattach; `clock`
   * and `random` time the splay before a change is applied.
   */
  constructor(
    private readonly hostEnv: HostEnvLookup = NO_HOST_ENV,
    private readonly clock: Clock = systemClock,
    private readonly random: RandomSource = Math.random,
  ) {}

  async prestart(req: TaskHookRequest, prep: Readonly<TaskPrep>): Promise<Partial<TaskPrep>> {
    this.stopWatching();
    const templates = req.task.Templates ?? [];
    if (templates.length === 0 || !prep.dirs) return {};
    const rendering: Rendering = { taskDir: prep.dirs.dir, baseEnv: { ...prep.env }, cache: this.newCache(req), texts: [] };
    try {
      const { results, env } = await this.renderUntilComplete(req, rendering, true);
      templates.forEach((t, i) => writeRendered(t, rendering.taskDir, results[i]!.text));
      rendering.texts = results.map((r) => r.text);
      this.rendering = rendering;
      return { env };
    } catch (err) {
      if (req.signal.aborted) throw err;
      throw new TaskSetupError(`Template failed: ${errorMessage(err)}`, { cause: err });
    }
  }

  async poststart(req: TaskHookRequest): Promise<void> {
    const templates = req.task.Templates ?? [];
    if (templates.length === 0 || !req.variables) return;
    if (!this.rendering) {
      // Reattached after an agent restart: learn what the templates read, taking the files as they
      // are, with the task env the env hook built before the start.
      const dirs = req.allocDir.taskDirs(req.task.Name);
      const baseEnv = buildTaskEnv({ alloc: req.alloc, group: req.group, task: req.task, node: req.node, dirs, hostEnv: this.hostEnv }).env;
      const rendering: Rendering = { taskDir: dirs.dir, baseEnv, cache: this.newCache(req), texts: [] };
      try {
        const { results } = await this.renderUntilComplete(req, rendering, false);
        rendering.texts = results.map((r) => r.text);
        this.rendering = rendering;
      } catch {
        return;
      }
    }
    if (!this.rendering.cache.usesVariables()) return;
    this.stopWatching();
    const ctl = new AbortController();
    this.watcher = ctl;
    void this.watch(req, this.rendering, ctl, AbortSignal.any([ctl.signal, req.signal]));
  }

  async exited(): Promise<void> {
    this.stopWatching();
  }
  async stop(): Promise<void> {
    this.stopWatching();
  }
  async preKill(): Promise<void> {
    this.stopWatching();
  }
  async shutdown(): Promise<void> {
    this.stopWatching();
  }

  /** Ends the watch (`only`: only if it is still that one, not a watch started since). */
  private stopWatching(only?: AbortController): void {
    if (only && this.watcher !== only) {
      only.abort();
      return;
    }
    this.watcher?.abort();
    this.watcher = null;
  }

  private newCache(req: TaskHookRequest): TaskVariableCache {
    const label = (r: TaskVariableRead): string => `${r.Path}@${r.Namespace || req.alloc.Namespace}.${req.alloc.Job?.Region || req.node.region || 'global'}`;
    return new TaskVariableCache(req.variables, req.alloc.ID, req.task.Name, label);
  }

  /** Renders every template once, in order (later ones see the variables of earlier env templates). */
  private async renderOnce(req: TaskHookRequest, r: Rendering): Promise<{ results: RenderResult[]; env: Record<string, string> }> {
    r.cache.startRender();
    let env = { ...r.baseEnv };
    const results: RenderResult[] = [];
    for (const t of req.task.Templates ?? []) {
      const text = await readSource(t, r.taskDir);
      const res = renderTemplateResult(text, {
        leftDelim: t.LeftDelim,
        rightDelim: t.RightDelim,
        env,
        nomad: r.cache,
        services: r.cache,
        namespace: req.alloc.Namespace,
        region: req.alloc.Job?.Region || req.node.region,
        errMissingKey: t.ErrMissingKey,
      });
      results.push(res);
      if (t.Envvars && res.blocked.length === 0) env = { ...env, ...parseEnvFile(res.text) };
    }
    return { results, env };
  }

  /**
   * Renders until nothing is missing: fetches reads not made yet at once, and waits for blocked
   * ones (when `wait`; else answers the render as it is).
   */
  private async renderUntilComplete(req: TaskHookRequest, r: Rendering, wait: boolean): Promise<{ results: RenderResult[]; env: Record<string, string> }> {
    let noticed = false;
    for (;;) {
      const out = await this.renderOnce(req, r);
      if (r.cache.hasMissing()) {
        await r.cache.fetchMissing(req.signal);
        continue;
      }
      const blocked = [...new Set(out.results.flatMap((x) => x.blocked))];
      if (blocked.length === 0 || !wait) return out;
      if (!noticed) {
        noticed = true;
        req.lifecycle.emit(newTaskEvent(TaskEventType.Template, this.clock.now(), { Message: `Missing: ${blocked.join(', ')}` }));
      }
      await r.cache.watch(WATCH_WAIT_MS, req.signal);
    }
  }

  /**
   * Watches the variables the templates read; re-renders and applies change modes. A template
   * with a `wait` holds its new text until its quiescence fires (quiescence.ts); change modes
   * are applied one batch at a time, whether from a render or from a quiescence.
   */
  private async watch(req: TaskHookRequest, r: Rendering, watcher: AbortController, signal: AbortSignal): Promise<void> {
    const templates = req.task.Templates ?? [];
    const held = new Map<number, string>();
    let applying: Promise<unknown> = Promise.resolve();
    const apply = (changed: Template[]): Promise<unknown> => {
      // A change mode that fails (the task stopped under it, the watch was aborted during the
      // splay) leaves nothing to do: the next change is applied afresh.
      applying = applying.then(() => (signal.aborted || changed.length === 0 ? undefined : applyTemplateChanges({ lifecycle: req.lifecycle, clock: this.clock, random: this.random, stopWatching: () => this.stopWatching(watcher) }, changed, signal))).catch(() => undefined);
      return applying;
    };
    const write = (i: number, text: string): void => {
      writeRendered(templates[i]!, r.taskDir, text);
      r.texts[i] = text;
    };
    const quiet = templates.map((t, i) => {
      const wait = quiescenceWait(t);
      if (!wait) return null;
      return new Quiescence(this.clock, wait.minMs, wait.maxMs, () => {
        const text = held.get(i);
        held.delete(i);
        if (signal.aborted || text === undefined || text === r.texts[i]) return;
        try {
          write(i, text);
        } catch (err) {
          req.lifecycle.emit(newTaskEvent(TaskEventType.Template, this.clock.now(), { Message: `Template failed: ${errorMessage(err)}` }));
          return;
        }
        void apply([templates[i]!]);
      });
    });
    signal.addEventListener('abort', () => quiet.forEach((q) => q?.cancel()), { once: true });
    while (!signal.aborted) {
      try {
        await r.cache.watch(WATCH_WAIT_MS, signal);
        if (signal.aborted) return;
        let { results } = await this.renderOnce(req, r);
        // A render may read what the last one did not (a list grew): fetch it and render again.
        while (r.cache.hasMissing() && !signal.aborted) {
          await r.cache.fetchMissing(signal);
          ({ results } = await this.renderOnce(req, r));
        }
        // A template waiting for data keeps what it rendered last, as Nomad's.
        if (results.some((x) => x.blocked.length > 0)) continue;
        const changed: Template[] = [];
        templates.forEach((t, i) => {
          // `once`: what the task started with stays, whatever changes later.
          if (t.Once) return;
          const text = results[i]!.text;
          if (text === (held.get(i) ?? r.texts[i])) return;
          const q = quiet[i];
          if (q) {
            held.set(i, text);
            q.tick();
            return;
          }
          write(i, text);
          changed.push(t);
        });
        await apply(changed);
      } catch (err) {
        if (signal.aborted) return;
        // A refused read or a template that no longer renders is the task's to see; servers
        // out of reach are only waited out (the next watch asks again).
        if (err instanceof TemplateRenderError) req.lifecycle.emit(newTaskEvent(TaskEventType.Template, this.clock.now(), { Message: `Template failed: ${errorMessage(err)}` }));
        await new Promise((res) => setTimeout(res, WATCH_RETRY_MS));
      }
    }
  }
}
