/**
 * What the template hook does when a variable change re-renders a template (Nomad's
 * handleTemplateRerenders): the splay waited first, then restart, signals, or change scripts
 * run in the task with Nomad's events, and fail_on_error killing the task. Time is a FakeClock
 * and the variables a scripted reader, so the splay is exact.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskHookRequest, TaskPrep } from '../../../src/client/taskrunner/interfaces.js';
import { TemplateHook } from '../../../src/client/taskrunner/hooks/template-hook.js';
import type { TaskEvent } from '../../../src/structs/alloc.js';
import type { TaskVariablesRequest, TaskVariablesResponse } from '../../../src/structs/task-variables.js';
import { canonicalizeTemplate, type Template } from '../../../src/structs/template.js';
import { FakeClock } from '../../../src/time/clock.js';

const NS = 1_000_000;

/** One variable whose value the test changes; blocking reads wait for the change. */
class VariableSource {
  private value = 'one';
  private index = 1;
  private wake: (() => void) | null = null;

  set(value: string): void {
    this.value = value;
    this.index++;
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** True while a blocking read waits at the latest index: the last change has been handled. */
  idle(): true | undefined {
    return this.wake !== null || undefined;
  }

  readonly read = async (req: TaskVariablesRequest, signal: AbortSignal): Promise<TaskVariablesResponse> => {
    if (req.MinIndex >= this.index) {
      await new Promise<void>((resolve, reject) => {
        this.wake = resolve;
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    const Items = { v: this.value };
    return { Index: this.index, Results: req.Reads.map((r) => ({ Variable: { Namespace: 'default', Path: r.Path, Items } as never })) };
  };
}

interface Recorded {
  events: TaskEvent[];
  execs: { command: string[]; timeoutMs: number; at: number }[];
  signals: string[];
  restarts: string[];
  kills: TaskEvent[];
}

async function withHook(
  templates: Partial<Template>[],
  exitCode: (command: string[]) => Promise<number>,
  fn: (h: { clock: FakeClock; vars: VariableSource; rec: Recorded; dir: string; stop: () => void; refuseSignal: (sig: string) => void }) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-tmpl-change-'));
  const clock = new FakeClock();
  const vars = new VariableSource();
  const rec: Recorded = { events: [], execs: [], signals: [], restarts: [], kills: [] };
  const ctl = new AbortController();
  const refused = new Set<string>();
  const prep: TaskPrep = {
    dirs: { dir, localDir: join(dir, 'local'), secretsDir: join(dir, 'secrets'), tmpDir: join(dir, 'tmp'), sharedAllocDir: join(dir, 'alloc'), logDir: join(dir, 'alloc', 'logs') },
    env: {},
    driverConfig: {},
    logs: null,
  };
  const req = {
    task: { Name: 't', Templates: templates.map(canonicalizeTemplate) },
    alloc: { ID: 'alloc-1', Namespace: 'default', Job: null },
    node: { region: 'global' },
    signal: ctl.signal,
    variables: vars.read,
    lifecycle: {
      restart: async (reason: string) => void rec.restarts.push(reason),
      signal: async (sig: string) => {
        rec.signals.push(sig);
        if (refused.has(sig)) throw new Error('no such process');
      },
      emit: (ev: TaskEvent) => void rec.events.push(ev),
      exec: async (command: string[], timeoutMs: number) => {
        rec.execs.push({ command, timeoutMs, at: clock.now() });
        return exitCode(command);
      },
      kill: async (ev: TaskEvent) => void rec.kills.push(ev),
    },
  } as unknown as TaskHookRequest;
  const hook = new TemplateHook(undefined, clock, () => 0.5);
  try {
    await hook.prestart(req, prep);
    await hook.poststart(req);
    await fn({ clock, vars, rec, dir, stop: () => ctl.abort(), refuseSignal: (sig) => refused.add(sig) });
  } finally {
    ctl.abort();
    await rm(dir, { recursive: true, force: true });
  }
}

const VAR_TEMPLATE = '{{ with nomadVar "nomad/jobs/j" }}{{ .v }}{{ end }}';

async function eventually<T>(what: string, probe: () => T | undefined | Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const fileIs = (dir: string, text: string) => async (): Promise<true | undefined> =>
  (await readFile(join(dir, 'local', 'out.txt'), 'utf8').catch(() => '')) === text ? true : undefined;

describe('template change modes', () => {
  it('waits a random part of the splay, then runs the change script in the task and says so', async () => {
    const script = { Command: '/usr/local/bin/reload', Args: ['-c', 'now'], Timeout: 7_000 * NS, FailOnError: false };
    await withHook([{ EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'script', ChangeScript: script, Splay: 10_000 * NS }], async () => 0, async ({ clock, vars, rec, dir }) => {
      const start = clock.now();
      vars.set('two');
      await eventually('the re-rendered file', fileIs(dir, 'two'));
      // random() is 0.5 of a 10 s splay: nothing runs before 5 s.
      await clock.advanceAsync(4_999);
      assert.equal(rec.execs.length, 0);
      await clock.advanceAsync(1);
      await eventually('the script', () => rec.execs[0]);
      assert.deepEqual(rec.execs, [{ command: ['/usr/local/bin/reload', '-c', 'now'], timeoutMs: 7_000, at: start + 5_000 }]);
      const ev = await eventually('the event', () => rec.events.find((e) => e.Type === 'Task hook message'));
      assert.equal(ev.DisplayMessage, 'Template successfully ran script /usr/local/bin/reload with arguments: [-c now]. Exit code: 0');
      assert.deepEqual([rec.restarts, rec.signals, rec.kills], [[], [], []]);
    });
  });

  it('reports a failing script as a hook failure and kills the task only with fail_on_error', async () => {
    const templates = (fail: boolean): Partial<Template>[] => [
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'script', Splay: 0, ChangeScript: { Command: '/bin/check', Args: [], Timeout: 5_000 * NS, FailOnError: fail } },
    ];
    for (const fail of [false, true]) {
      await withHook(templates(fail), async () => 3, async ({ vars, rec, dir }) => {
        vars.set('two');
        await eventually('the re-rendered file', fileIs(dir, 'two'));
        const ev = await eventually('the failure event', () => rec.events.find((e) => e.Type === 'Task hook failed'));
        assert.equal(ev.DisplayMessage, 'Template ran script /bin/check with arguments [] on change but it exited with code: 3');
        if (!fail) {
          // The watch goes on: a later change runs the script again.
          vars.set('three');
          await eventually('the second run', () => rec.execs.length === 2 || undefined);
          assert.equal(rec.kills.length, 0);
          return;
        }
        const kill = await eventually('the kill', () => rec.kills[0]);
        assert.equal(kill.Type, 'Killing');
        assert.equal(kill.DisplayMessage, 'Template script failed, task is being killed');
        assert.equal(kill.FailsTask, true);
      });
    }
  });

  it('a script that fails after its watch ended (the task restarted or stopped meanwhile) kills nothing', async () => {
    const script = { Command: '/bin/slow', Args: [], Timeout: 5_000 * NS, FailOnError: true };
    let release: (code: number) => void = () => {};
    const slow = (): Promise<number> => new Promise((r) => (release = r));
    await withHook([{ EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'script', ChangeScript: script, Splay: 0 }], slow, async ({ vars, rec, stop }) => {
      vars.set('two');
      await eventually('the script started', () => rec.execs[0]);
      stop();
      release(3);
      await eventually('the failure reported', () => rec.events.find((e) => e.Type === 'Task hook failed'));
      await new Promise((r) => setTimeout(r, 20));
      assert.deepEqual(rec.kills, []);
    });
  });

  it('every signal is sent even when one fails, then the task is killed naming the failure', async () => {
    const templates = [
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'signal', ChangeSignal: 'SIGHUP', Splay: 0 },
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/b.txt', ChangeMode: 'signal', ChangeSignal: 'SIGUSR1', Splay: 0 },
    ];
    await withHook(templates, async () => 0, async ({ vars, rec, refuseSignal }) => {
      refuseSignal('SIGHUP');
      vars.set('two');
      const kill = await eventually('the kill', () => rec.kills[0]);
      assert.deepEqual(rec.signals, ['SIGHUP', 'SIGUSR1']);
      assert.equal(kill.DisplayMessage, 'Template failed to send signals [SIGHUP SIGUSR1]: no such process');
      assert.equal(kill.FailsTask, true);
    });
  });

  it('a script that cannot run is reported with the reason', async () => {
    const script = { Command: 'reload', Args: ['a'], Timeout: 5_000 * NS, FailOnError: false };
    const refuse = async (): Promise<number> => {
      throw new Error('timed out after 5s');
    };
    await withHook([{ EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'script', ChangeScript: script, Splay: 0 }], refuse, async ({ vars, rec }) => {
      vars.set('two');
      const ev = await eventually('the failure event', () => rec.events.find((e) => e.Type === 'Task hook failed'));
      assert.equal(ev.DisplayMessage, 'Template failed to run script reload with arguments [a] on change: timed out after 5s. Exit code: -1');
    });
  });

  it('restart wins over signals and scripts; signals are sent once each; noop templates add no splay', async () => {
    const script = { Command: '/bin/s', Args: [], Timeout: 5_000 * NS, FailOnError: false };
    const both = [
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'signal', ChangeSignal: 'SIGHUP', Splay: 0 },
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/b.txt', ChangeMode: 'signal', ChangeSignal: 'SIGHUP', Splay: 0 },
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/c.txt', ChangeMode: 'script', ChangeScript: script, Splay: 0 },
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/d.txt', ChangeMode: 'noop', Splay: 3_600_000 * NS },
    ];
    await withHook(both, async () => 0, async ({ vars, rec, dir }) => {
      vars.set('two');
      await eventually('the re-rendered file', fileIs(dir, 'two'));
      await eventually('the script', () => rec.execs[0]);
      assert.deepEqual(rec.signals, ['SIGHUP']);
      assert.deepEqual(rec.restarts, []);
    });
    await withHook([both[0]!, { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/r.txt', ChangeMode: 'restart', Splay: 0 }, both[2]!], async () => 0, async ({ vars, rec }) => {
      vars.set('two');
      await eventually('the restart', () => rec.restarts[0]);
      assert.deepEqual(rec.restarts, ['Template with change_mode restart re-rendered']);
      assert.deepEqual([rec.signals, rec.execs], [[], []]);
    });
  });

  it('a once template keeps its first render and fires no change mode; the others still re-render', async () => {
    const templates = [
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/once.txt', ChangeMode: 'restart', Splay: 0, Once: true },
      { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'signal', ChangeSignal: 'SIGHUP', Splay: 0 },
    ];
    await withHook(templates, async () => 0, async ({ vars, rec, dir }) => {
      await eventually('the watch', () => vars.idle());
      vars.set('two');
      await eventually('the re-rendered file', fileIs(dir, 'two'));
      await eventually('the signal', () => rec.signals[0]);
      await eventually('the change handled', () => vars.idle());
      assert.equal(await readFile(join(dir, 'local', 'once.txt'), 'utf8'), 'one');
      assert.deepEqual(rec.restarts, [], 'the once template asked for a restart on change, and must not get one');
      assert.deepEqual(rec.signals, ['SIGHUP']);
    });
  });

  it('a template with wait holds its change until the data is quiet for min, and never past max', async () => {
    const script = { Command: '/bin/s', Args: [], Timeout: 5_000 * NS, FailOnError: false };
    const template = { EmbeddedTmpl: VAR_TEMPLATE, DestPath: 'local/out.txt', ChangeMode: 'script', ChangeScript: script, Splay: 0, Wait: { Min: 2_000 * NS, Max: 5_000 * NS } };
    await withHook([template], async () => 0, async ({ clock, vars, rec, dir }) => {
      const start = clock.now();
      await eventually('the watch', () => vars.idle());
      const change = async (value: string): Promise<void> => {
        vars.set(value);
        await eventually('the change handled', () => vars.idle());
      };
      const still = async (text: string): Promise<void> => {
        assert.equal(await readFile(join(dir, 'local', 'out.txt'), 'utf8'), text);
        assert.equal(rec.execs.length, 0);
      };
      await change('two');
      await clock.advanceAsync(1_999);
      await still('one');
      // Another change inside min starts the quiet period again...
      await change('three');
      await clock.advanceAsync(1_999);
      await still('one');
      // ...but never past max after the first held change (5 s).
      await change('four');
      await clock.advanceAsync(1_001);
      await still('one');
      await clock.advanceAsync(1);
      await eventually('the held render written', fileIs(dir, 'four'));
      await eventually('the script', () => rec.execs[0]);
      assert.deepEqual(rec.execs.map((e) => e.at - start), [5_000]);
    });
  });
});
