/**
 * The variables one task's templates read, fetched from its servers and kept between renders.
 * A render records every read it makes (`wanted`); reads not fetched yet answer "undefined"
 * (the render then says it is blocked), and `fetchMissing` gets them in one request. `watch`
 * waits (a blocking query on the variables table) until any wanted read may have changed and
 * refreshes them all. A refused read fails the render with Nomad's text. The same cache answers
 * the templates' native service reads (`nomadService`, `nomadServices`).
 */
import type { TaskVariableRead, TaskVariableResult } from '../../structs/task-variables.js';
import { MAX_TASK_VARIABLE_READS } from '../../structs/task-variables.js';
import type { Variable, VariableMetadata } from '../../structs/variable.js';
import type { TaskVariableReader } from '../taskrunner/interfaces.js';
import type { ServiceRegistration, ServiceRegistrationListStub } from '../../structs/service-registration.js';
import type { NomadServiceSource, NomadVarSource } from './render-template.js';
import { TemplateRenderError } from './template-error.js';

const keyOf = (r: TaskVariableRead): string => `${r.Op}\u0000${r.Namespace}\u0000${r.Path}\u0000${r.Tag ?? ''}\u0000${r.Choose ?? ''}`;

export class TaskVariableCache implements NomadVarSource, NomadServiceSource {
  private readonly results = new Map<string, TaskVariableResult>();
  private wanted = new Map<string, TaskVariableRead>();
  /** The index of the last answer (0: nothing fetched yet). */
  index = 0;

  constructor(
    private readonly read: TaskVariableReader | undefined,
    private readonly allocId: string,
    private readonly task: string,
    private readonly label: (r: TaskVariableRead) => string,
  ) {}

  /** Forgets what the previous render read (a new render records its own reads). */
  startRender(): void {
    this.wanted = new Map();
  }

  /** Whether the last render read any variable. */
  usesVariables(): boolean {
    return this.wanted.size > 0;
  }

  get(namespace: string, path: string): Variable | null | undefined {
    const r = this.want({ Op: 'get', Namespace: namespace, Path: path });
    if (!r) return undefined;
    if ('Error' in r) throw new TemplateRenderError(`nomad.var.get(${this.label({ Op: 'get', Namespace: namespace, Path: path })}): ${r.Error}`);
    return 'Variable' in r ? r.Variable : undefined;
  }

  list(namespace: string, prefix: string): VariableMetadata[] | undefined {
    const r = this.want({ Op: 'list', Namespace: namespace, Path: prefix });
    if (!r) return undefined;
    if ('Error' in r) throw new TemplateRenderError(`nomad.var.list(${this.label({ Op: 'list', Namespace: namespace, Path: prefix })}): ${r.Error}`);
    return 'List' in r ? r.List : undefined;
  }

  service(namespace: string, name: string, tag: string, choose: string): ServiceRegistration[] | undefined {
    const read: TaskVariableRead = { Op: 'service', Namespace: namespace, Path: name, ...(tag ? { Tag: tag } : {}), ...(choose ? { Choose: choose } : {}) };
    const r = this.want(read);
    if (!r) return undefined;
    if ('Error' in r) throw new TemplateRenderError(`nomad.service(${this.label(read)}): ${r.Error}`);
    return 'Services' in r ? r.Services : undefined;
  }

  services(namespace: string): ServiceRegistrationListStub[] | undefined {
    const read: TaskVariableRead = { Op: 'services', Namespace: namespace, Path: '' };
    const r = this.want(read);
    if (!r) return undefined;
    if ('Error' in r) throw new TemplateRenderError(`nomad.services(${this.label(read)}): ${r.Error}`);
    return 'ServiceList' in r ? r.ServiceList : undefined;
  }

  /** Whether the last render made reads not fetched yet. */
  hasMissing(): boolean {
    for (const k of this.wanted.keys()) if (!this.results.has(k)) return true;
    return false;
  }

  /** Fetches the reads of the last render not fetched yet. */
  async fetchMissing(signal: AbortSignal): Promise<void> {
    const missing = [...this.wanted.entries()].filter(([k]) => !this.results.has(k)).map(([, r]) => r);
    await this.fetch(missing, 0, 0, signal);
  }

  /** Waits until the variables may have changed past the last answer (or `waitMs`), then refreshes every wanted read. */
  async watch(waitMs: number, signal: AbortSignal): Promise<void> {
    await this.fetch([...this.wanted.values()], this.index, waitMs, signal);
  }

  private want(r: TaskVariableRead): TaskVariableResult | undefined {
    const k = keyOf(r);
    this.wanted.set(k, r);
    return this.results.get(k);
  }

  private async fetch(reads: TaskVariableRead[], minIndex: number, waitMs: number, signal: AbortSignal): Promise<void> {
    if (!this.read) throw new TemplateRenderError('Nomad variables: no server to read them from');
    for (let i = 0; i < Math.max(reads.length, 1); i += MAX_TASK_VARIABLE_READS) {
      const chunk = reads.slice(i, i + MAX_TASK_VARIABLE_READS);
      const res = await this.read({ AllocID: this.allocId, Task: this.task, Reads: chunk, MinIndex: i === 0 ? minIndex : 0, WaitMs: i === 0 ? waitMs : 0 }, signal);
      chunk.forEach((r, j) => {
        const result = res.Results[j];
        if (result) this.results.set(keyOf(r), result);
      });
      this.index = Math.max(this.index, res.Index);
    }
  }
}
