/**
 * An in-memory ServerApi for the HTTP tests: tables of plain objects, one global index bumped
 * on every write, and waitForChange woken by an EventEmitter. Records the calls it received.
 */
import { EventEmitter } from 'node:events';
import {
  ServerError,
  Table,
  type AllocClientUpdate,
  type DeregisterJobResult,
  type JobPlanResult,
  type NodeRegisterResult,
  type RegisterJobOptions,
  type RegisterJobResult,
  type ServerApi,
  type StateReader,
} from '../../src/server/server-api.js';
import type { ClientHttpApi } from '../../src/http/client-http-api.js';
import { newEvaluation } from '../../src/server/new-eval.js';
import type { Allocation, Deployment, Evaluation, Job, JobSummary, Node, NodeEligibility, NodeStatus } from '../../src/structs/index.js';
import { newNode } from '../../src/structs/node.js';

/** A job with the fields the routes read; `overrides` win. */
export function mockJob(overrides: Partial<Job> = {}): Job {
  return {
    Region: 'global',
    Namespace: 'default',
    ID: 'example',
    Name: 'example',
    Type: 'service',
    Priority: 50,
    AllAtOnce: false,
    Datacenters: ['dc1'],
    NodePool: 'default',
    Constraints: null,
    Affinities: null,
    Spreads: null,
    TaskGroups: [],
    Update: null,
    Periodic: null,
    ParameterizedJob: null,
    Dispatched: false,
    Payload: null,
    Meta: null,
    Stop: false,
    ParentID: '',
    Status: 'pending',
    StatusDescription: '',
    Stable: false,
    Version: 0,
    SubmitTime: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
    ...overrides,
  };
}

/** A ready node. */
export function mockNode(overrides: Partial<Node> = {}): Node {
  return newNode({
    ID: '11111111-2222-3333-4444-555555555555',
    Name: 'node-1',
    HTTPAddr: '127.0.0.1:4646',
    Attributes: { 'os.name': 'linux' },
    NodeResources: {
      Cpu: { CpuShares: 4000, TotalCpuCores: 2, ReservableCpuCores: null },
      Memory: { MemoryMB: 8192 },
      Disk: { DiskMB: 100000 },
      Networks: null,
      Devices: null,
      MinDynamicPort: 20000,
      MaxDynamicPort: 32000,
    },
    Status: 'ready',
    ...overrides,
  });
}

/** An allocation of `job` on a node. */
export function mockAlloc(overrides: Partial<Allocation> = {}): Allocation {
  return {
    ID: 'aaaaaaaa-0000-0000-0000-000000000001',
    Namespace: 'default',
    EvalID: 'eeeeeeee-0000-0000-0000-000000000001',
    Name: 'example.web[0]',
    NodeID: '11111111-2222-3333-4444-555555555555',
    NodeName: 'node-1',
    JobID: 'example',
    Job: null,
    TaskGroup: 'web',
    AllocatedResources: null,
    Metrics: null,
    DesiredStatus: 'run',
    DesiredDescription: '',
    DesiredTransition: {},
    ClientStatus: 'pending',
    ClientDescription: '',
    TaskStates: null,
    DeploymentID: '',
    DeploymentStatus: null,
    FollowupEvalID: '',
    PreviousAllocation: '',
    NextAllocation: '',
    RescheduleTracker: null,
    PreemptedAllocations: null,
    PreemptedByAllocation: '',
    CreateIndex: 0,
    ModifyIndex: 0,
    AllocModifyIndex: 0,
    CreateTime: 0,
    ModifyTime: 0,
    ...overrides,
  };
}

/** An evaluation. */
export function mockEval(overrides: Partial<Evaluation> = {}): Evaluation {
  const job = { ID: 'example', Namespace: 'default', Priority: 50, Type: 'service', JobModifyIndex: 0 } as const;
  return newEvaluation(job, 'job-register', 0, { ID: 'eeeeeeee-0000-0000-0000-000000000001', ...overrides });
}

/** A client with only a node ID; every other operation fails (the server routes never call them). */
export function fakeClient(nodeId = 'n1'): ClientHttpApi {
  const unsupported = () => {
    throw new Error('not supported by the fake client');
  };
  return {
    nodeId: () => nodeId,
    hasAlloc: () => false,
    allocDir: () => undefined,
    execSpec: unsupported,
    restartAlloc: unsupported,
    signalAlloc: unsupported,
    allocStats: unsupported,
  };
}

const key = (ns: string, id: string) => `${ns}/${id}`;

/** The in-memory fake. */
export class FakeServerApi implements ServerApi {
  index = 1;
  readonly tableIndexes = new Map<Table, number>();
  readonly jobsByKey = new Map<string, Job[]>();
  readonly allocsById = new Map<string, Allocation>();
  readonly evalsById = new Map<string, Evaluation>();
  readonly nodesById = new Map<string, Node>();
  readonly deploymentsById = new Map<string, Deployment>();
  readonly calls: { method: string; args: unknown[] }[] = [];
  private readonly events = new EventEmitter();
  private evalSeq = 0;

  constructor() {
    this.events.setMaxListeners(1000);
  }

  /** Bumps the index and marks `tables` as changed, waking blocked queries. */
  touch(...tables: Table[]): number {
    this.index++;
    for (const t of tables) this.tableIndexes.set(t, this.index);
    this.events.emit('change');
    return this.index;
  }

  putJob(job: Job): number {
    const idx = this.touch(Table.Jobs, Table.JobVersions, Table.JobSummaries);
    const k = key(job.Namespace, job.ID);
    const versions = this.jobsByKey.get(k) ?? [];
    const stored = { ...job, Version: versions.length, CreateIndex: versions[0]?.CreateIndex ?? idx, ModifyIndex: idx, JobModifyIndex: idx };
    this.jobsByKey.set(k, [stored, ...versions]);
    return idx;
  }

  putAlloc(a: Allocation): number {
    const idx = this.touch(Table.Allocs);
    this.allocsById.set(a.ID, { ...a, ModifyIndex: idx, CreateIndex: a.CreateIndex || idx });
    return idx;
  }

  putEval(e: Evaluation): number {
    const idx = this.touch(Table.Evals);
    this.evalsById.set(e.ID, { ...e, ModifyIndex: idx, CreateIndex: e.CreateIndex || idx });
    return idx;
  }

  putNode(n: Node): number {
    const idx = this.touch(Table.Nodes);
    this.nodesById.set(n.ID, { ...n, ModifyIndex: idx, CreateIndex: n.CreateIndex || idx });
    return idx;
  }

  readonly state: StateReader = {
    latestIndex: () => this.index,
    tableIndex: (t) => this.tableIndexes.get(t) ?? 0,
    jobs: (ns, prefix) =>
      [...this.jobsByKey.values()]
        .map((v) => v[0]!)
        .filter((j) => (ns === '*' || j.Namespace === ns) && (!prefix || j.ID.startsWith(prefix))),
    jobById: (ns, id) => this.jobsByKey.get(key(ns, id))?.[0],
    jobVersions: (ns, id) => this.jobsByKey.get(key(ns, id)) ?? [],
    jobSummary: (ns, id): JobSummary | undefined => {
      const j = this.jobsByKey.get(key(ns, id))?.[0];
      if (!j) return undefined;
      return { JobID: id, Namespace: ns, Summary: {}, Children: null, CreateIndex: j.CreateIndex, ModifyIndex: j.ModifyIndex };
    },
    allocs: (prefix) => [...this.allocsById.values()].filter((a) => !prefix || a.ID.startsWith(prefix)),
    allocById: (id) => this.allocsById.get(id),
    allocsByJob: (ns, jobId) => [...this.allocsById.values()].filter((a) => a.Namespace === ns && a.JobID === jobId),
    allocsByNode: (nodeId) => [...this.allocsById.values()].filter((a) => a.NodeID === nodeId),
    evals: (prefix) => [...this.evalsById.values()].filter((e) => !prefix || e.ID.startsWith(prefix)),
    evalById: (id) => this.evalsById.get(id),
    evalsByJob: (ns, jobId) => [...this.evalsById.values()].filter((e) => e.Namespace === ns && e.JobID === jobId),
    nodes: (prefix) => [...this.nodesById.values()].filter((n) => !prefix || n.ID.startsWith(prefix)),
    nodeById: (id) => this.nodesById.get(id),
    deployments: (prefix) => [...this.deploymentsById.values()].filter((d) => !prefix || d.ID.startsWith(prefix)),
    deploymentById: (id) => this.deploymentsById.get(id),
    deploymentsByJob: (ns, jobId) => [...this.deploymentsById.values()].filter((d) => d.Namespace === ns && d.JobID === jobId),
  };

  isLeader(): boolean {
    return true;
  }
  leaderAddress(): string {
    return '127.0.0.1:4647';
  }
  peers(): string[] {
    return ['127.0.0.1:4647'];
  }

  waitForChange(tables: Table[], afterIndex: number, timeoutMs: number, signal?: AbortSignal): Promise<number> {
    const current = () => Math.max(0, ...tables.map((t) => this.state.tableIndex(t)));
    return new Promise((resolve) => {
      if (current() > afterIndex || signal?.aborted) return resolve(current());
      const done = () => {
        clearTimeout(timer);
        this.events.off('change', onChange);
        signal?.removeEventListener('abort', done);
        resolve(current());
      };
      const onChange = () => {
        if (current() > afterIndex) done();
      };
      const timer = setTimeout(done, timeoutMs);
      this.events.on('change', onChange);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  private newEval(jobId: string, ns: string, trigger: string): Evaluation {
    this.evalSeq++;
    const ev = mockEval({ ID: `eeeeeeee-0000-0000-0000-${String(this.evalSeq).padStart(12, '0')}`, JobID: jobId, Namespace: ns, TriggeredBy: trigger });
    this.putEval(ev);
    return this.evalsById.get(ev.ID)!;
  }

  async registerJob(job: Job, opts?: RegisterJobOptions): Promise<RegisterJobResult> {
    this.calls.push({ method: 'registerJob', args: [job, opts] });
    const existing = this.state.jobById(job.Namespace, job.ID);
    if (opts?.enforceIndex && (existing?.JobModifyIndex ?? 0) !== (opts.jobModifyIndex ?? 0)) {
      throw new ServerError('JOB_MODIFY_INDEX_CONFLICT', { expected: opts.jobModifyIndex ?? 0, actual: existing?.JobModifyIndex ?? 0 });
    }
    const jobIndex = this.putJob(job);
    const ev = this.newEval(job.ID, job.Namespace, 'job-register');
    return { evalId: ev.ID, evalCreateIndex: ev.CreateIndex, jobModifyIndex: jobIndex, index: ev.CreateIndex, warnings: '' };
  }

  async deregisterJob(namespace: string, jobId: string, purge: boolean): Promise<DeregisterJobResult> {
    this.calls.push({ method: 'deregisterJob', args: [namespace, jobId, purge] });
    const job = this.state.jobById(namespace, jobId);
    if (!job) throw new ServerError('JOB_NOT_FOUND', { job: jobId });
    if (purge) {
      this.jobsByKey.delete(key(namespace, jobId));
      this.touch(Table.Jobs);
    } else {
      this.putJob({ ...job, Stop: true });
    }
    const ev = this.newEval(jobId, namespace, 'job-deregister');
    return { evalId: ev.ID, evalCreateIndex: ev.CreateIndex, jobModifyIndex: this.index, index: this.index };
  }

  async evaluateJob(namespace: string, jobId: string): Promise<{ evalId: string; index: number }> {
    const ev = this.newEval(jobId, namespace, 'job-register');
    return { evalId: ev.ID, index: ev.CreateIndex };
  }

  async planJob(job: Job): Promise<JobPlanResult> {
    this.calls.push({ method: 'planJob', args: [job] });
    const annotations: JobPlanResult['annotations'] = {};
    for (const tg of job.TaskGroups) {
      annotations[tg.Name] = { Ignore: 0, Place: tg.Count, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0 };
    }
    const existing = this.state.jobById(job.Namespace, job.ID);
    return { annotations, failedTGAllocs: null, plan: null, jobModifyIndex: existing?.JobModifyIndex ?? 0, index: this.index, diffType: existing ? 'Edited' : 'Added' };
  }

  async stopAlloc(allocId: string): Promise<{ evalId: string; index: number }> {
    const a = this.allocsById.get(allocId);
    if (!a) throw new ServerError('ALLOC_NOT_FOUND', { alloc: allocId });
    this.putAlloc({ ...a, DesiredStatus: 'stop' });
    const ev = this.newEval(a.JobID, a.Namespace, 'alloc-stop');
    return { evalId: ev.ID, index: this.index };
  }

  async registerNode(node: Node): Promise<NodeRegisterResult> {
    this.calls.push({ method: 'registerNode', args: [node] });
    const idx = this.putNode(mockNode(node));
    return { heartbeatTtl: 10_000_000_000, index: idx };
  }

  async heartbeatNode(nodeId: string, status: NodeStatus): Promise<NodeRegisterResult> {
    const n = this.nodesById.get(nodeId);
    if (!n) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    const idx = this.putNode({ ...n, Status: status });
    return { heartbeatTtl: 10_000_000_000, index: idx };
  }

  async updateNodeEligibility(nodeId: string, eligibility: NodeEligibility): Promise<{ index: number }> {
    const n = this.nodesById.get(nodeId);
    if (!n) throw new ServerError('NODE_NOT_FOUND', { node: nodeId });
    return { index: this.putNode({ ...n, SchedulingEligibility: eligibility }) };
  }

  async updateAllocsFromClient(updates: AllocClientUpdate[]): Promise<{ index: number }> {
    this.calls.push({ method: 'updateAllocsFromClient', args: [updates] });
    for (const u of updates) {
      const a = this.allocsById.get(u.ID);
      if (a) this.allocsById.set(u.ID, { ...a, ClientStatus: u.ClientStatus, TaskStates: u.TaskStates });
    }
    return { index: this.touch(Table.Allocs) };
  }
}
