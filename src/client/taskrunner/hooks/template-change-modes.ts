/**
 * What happens when re-rendered templates changed (Nomad's handleTemplateRerenders): after a
 * random wait of up to the largest splay among the changed templates, restart the task if any
 * of them asks for it; else send each change_signal once (a signal that cannot be sent kills the
 * task) and run each change_script inside the task through the driver's exec, concurrently (a
 * failure is a "Task hook failed" event, and kills the task with fail_on_error). noop templates
 * do nothing and add no splay.
 */
import { TaskEventType } from '../../../structs/alloc.js';
import { nanosToMs } from '../../../structs/duration.js';
import { TemplateChangeMode, type ChangeScript, type Template } from '../../../structs/template.js';
import type { Clock, RandomSource } from '../../../time/clock.js';
import { errorMessage } from '../../client-error.js';
import type { TaskLifecycle } from '../interfaces.js';
import { newTaskEvent } from '../task-event.js';

/** What applying change modes needs: the task, time, randomness, and ending the watch. */
export interface ChangeModeDeps {
  lifecycle: TaskLifecycle;
  clock: Clock;
  random: RandomSource;
  /** Ends this template watch (the task is being restarted or killed); never a later one. */
  stopWatching(): void;
}

/**
 * Applies the change modes of the templates that changed (Nomad's handleTemplateRerenders).
 * Restarting or killing the task ends the watch.
 */
export async function applyTemplateChanges(deps: ChangeModeDeps, changed: Template[], signal: AbortSignal): Promise<void> {
  const acting = changed.filter((t) => (t.ChangeMode || TemplateChangeMode.Restart) !== TemplateChangeMode.Noop);
  if (acting.length === 0) return;
  // Many allocations rendering the same change at once must not all restart together.
  const splayMs = Math.max(...acting.map((t) => nanosToMs(t.Splay ?? 0)));
  if (splayMs > 0) await deps.clock.sleep(Math.floor(deps.random() * splayMs), signal);
  if (acting.some((t) => (t.ChangeMode || TemplateChangeMode.Restart) === TemplateChangeMode.Restart)) {
    deps.stopWatching();
    await deps.lifecycle.restart('Template with change_mode restart re-rendered');
    return;
  }
  // Every signal is sent; any that could not be kills the task (after the scripts ran, as Nomad's).
  const signals = [...new Set(acting.filter((t) => t.ChangeMode === TemplateChangeMode.Signal && t.ChangeSignal).map((t) => t.ChangeSignal))];
  const signalErrors: string[] = [];
  for (const sig of signals) {
    await deps.lifecycle.signal(sig, 'Template re-rendered').catch((err: unknown) => void signalErrors.push(errorMessage(err)));
  }
  const scripts = acting.filter((t) => t.ChangeMode === TemplateChangeMode.Script && t.ChangeScript).map((t) => t.ChangeScript!);
  const failed = await Promise.all(scripts.map((script) => runScript(deps, script)));
  // A watch that ended meanwhile (the task restarted or stopped) must not act on the task anew.
  if (signal.aborted) return;
  const reason =
    signalErrors.length > 0 ? `Template failed to send signals [${signals.join(' ')}]: ${signalErrors.join('; ')}` : failed.some((f) => f) ? 'Template script failed, task is being killed' : undefined;
  if (reason === undefined) return;
  deps.stopWatching();
  await deps.lifecycle.kill(newTaskEvent(TaskEventType.Killing, deps.clock.now(), { KillReason: reason, FailsTask: true }));
}

/**
 * Runs one change script in the task and reports it as Nomad does; true when it failed and
 * its fail_on_error asks for the task to be killed.
 */
async function runScript(deps: ChangeModeDeps, script: ChangeScript): Promise<boolean> {
  // Nomad formats the arguments as Go prints a string slice: [a b].
  const what = `${script.Command} with arguments [${script.Args.join(' ')}]`;
  let message: string;
  try {
    const code = await deps.lifecycle.exec([script.Command, ...script.Args], nanosToMs(script.Timeout));
    if (code === 0) {
      deps.lifecycle.emit(newTaskEvent(TaskEventType.HookMessage, deps.clock.now(), { Message: `Template successfully ran script ${script.Command} with arguments: [${script.Args.join(' ')}]. Exit code: 0` }));
      return false;
    }
    message = `Template ran script ${what} on change but it exited with code: ${code}`;
  } catch (err) {
    message = `Template failed to run script ${what} on change: ${errorMessage(err)}. Exit code: -1`;
  }
  deps.lifecycle.emit(newTaskEvent(TaskEventType.HookFailed, deps.clock.now(), { Message: message }));
  return script.FailOnError;
}
