/**
 * The Go api structs (hashicorp/nomad api/*.go) the official clients decode Caravan's answers
 * into, reduced to the fields Caravan sends, as GoType schemas for compat-shapes.test.ts.
 */
import { map, ptr, slice, struct, type GoType } from './compat-go-shape.js';

const S = 'string';
const I = 'int';
const U = 'uint';
const B = 'bool';
const D = 'duration';
const T = 'time';

export const Port = struct({ Label: S, Value: I, To: I, HostNetwork: S });
export const NetworkResource = struct({ Mode: S, Device: S, CIDR: S, IP: S, MBits: I, ReservedPorts: slice(Port), DynamicPorts: slice(Port) });
export const Constraint = struct({ LTarget: S, RTarget: S, Operand: S });
export const RestartPolicy = struct({ Attempts: I, Interval: D, Delay: D, Mode: S, RenderTemplates: B });
export const UpdateStrategy = struct({
  Stagger: D, MaxParallel: I, HealthCheck: S, MinHealthyTime: D, HealthyDeadline: D, ProgressDeadline: D, Canary: I, AutoRevert: B, AutoPromote: B,
});
export const Template = struct({
  SourcePath: S, DestPath: S, EmbeddedTmpl: S, ChangeMode: S, ChangeSignal: S, Splay: D, Perms: S, Uid: ptr(I), Gid: ptr(I),
  LeftDelim: S, RightDelim: S, Envvars: B, VaultGrace: D, Wait: ptr(struct({ Min: D, Max: D })), ErrMissingKey: B, Once: B,
});
export const TaskArtifact = struct({ GetterSource: S, GetterOptions: map(S), GetterHeaders: map(S), GetterMode: S, RelativeDest: S, Chown: B });
export const ServiceCheck = struct({ Name: S, Type: S, Path: S, Protocol: S, PortLabel: S, Interval: D, Timeout: D, Method: S });
export const Service = struct({
  Name: S, Tags: slice(S), CanaryTags: slice(S), EnableTagOverride: B, PortLabel: S, AddressMode: S, Address: S,
  Checks: slice(ServiceCheck), Meta: map(S), CanaryMeta: map(S), TaskName: S, OnUpdate: S, Provider: S,
  Connect: ptr(struct({ Native: B })), CheckRestart: ptr(struct({ Limit: I, Grace: D, IgnoreWarnings: B })),
});
export const Task = struct({
  Name: S, Driver: S, User: S, Lifecycle: ptr(struct({ Hook: S, Sidecar: B })), Config: map('any'), Constraints: slice(Constraint),
  Env: map(S), Services: slice(Service),
  Resources: ptr(struct({ CPU: I, Cores: I, MemoryMB: I, MemoryMaxMB: I, DiskMB: I, Networks: slice(NetworkResource) })),
  RestartPolicy: ptr(RestartPolicy), Meta: map(S), KillTimeout: D, LogConfig: ptr(struct({ MaxFiles: I, MaxFileSizeMB: I, Disabled: B })),
  Artifacts: slice(TaskArtifact), Templates: slice(Template), DispatchPayload: ptr(struct({ File: S })), Leader: B, ShutdownDelay: D,
  KillSignal: S, Kind: S,
});
export const TaskGroup = struct({
  Name: S, Count: I, Constraints: slice(Constraint), Tasks: slice(Task), RestartPolicy: ptr(RestartPolicy),
  ReschedulePolicy: ptr(struct({ Attempts: I, Interval: D, Delay: D, DelayFunction: S, MaxDelay: D, Unlimited: B })),
  EphemeralDisk: ptr(struct({ Sticky: B, Migrate: B, SizeMB: I })), Update: ptr(UpdateStrategy),
  Migrate: ptr(struct({ MaxParallel: I, HealthCheck: S, MinHealthyTime: D, HealthyDeadline: D })), Networks: slice(NetworkResource),
  Meta: map(S), Services: slice(Service), ShutdownDelay: ptr(D), StopAfterClientDisconnect: ptr(D), MaxClientDisconnect: ptr(D),
});
export const Job = struct({
  Region: S, Namespace: S, ID: S, Name: S, Type: S, Priority: I, AllAtOnce: B, Datacenters: slice(S), NodePool: S,
  Constraints: slice(Constraint), TaskGroups: slice(TaskGroup), Update: ptr(UpdateStrategy),
  Periodic: ptr(struct({ Enabled: B, Spec: S, SpecType: S, ProhibitOverlap: B, TimeZone: S })),
  ParameterizedJob: ptr(struct({ Payload: S, MetaRequired: slice(S), MetaOptional: slice(S) })), Dispatched: B, Payload: 'bytes',
  Meta: map(S), Stop: B, ParentID: S, Status: S, StatusDescription: S, Stable: B, Version: U, SubmitTime: I,
  CreateIndex: U, ModifyIndex: U, JobModifyIndex: U,
});
export const JobSummary = struct({
  JobID: S, Namespace: S,
  Summary: map(struct({ Queued: I, Complete: I, Failed: I, Running: I, Starting: I, Lost: I, Unknown: I })),
  Children: ptr(struct({ Pending: I, Running: I, Dead: I })), CreateIndex: U, ModifyIndex: U,
});
export const JobListStub = struct({
  ID: S, ParentID: S, Name: S, Namespace: S, Datacenters: slice(S), NodePool: S, Type: S, Priority: I, Periodic: B,
  ParameterizedJob: B, Stop: B, Status: S, StatusDescription: S, JobSummary: ptr(JobSummary), CreateIndex: U,
  ModifyIndex: U, JobModifyIndex: U, SubmitTime: I, Meta: map(S),
});
export const AllocationMetric = struct({
  NodesEvaluated: I, NodesFiltered: I, NodesInPool: I, NodesAvailable: map(I), ClassFiltered: map(I), ConstraintFiltered: map(I),
  NodesExhausted: I, ClassExhausted: map(I), DimensionExhausted: map(I), QuotaExhausted: slice(S), Scores: map('float'),
  AllocationTime: D, CoalescedFailures: I, ScoreMetaData: slice(struct({ NodeID: S, Scores: map('float'), NormScore: 'float' })),
});
export const TaskEvent = struct({
  Type: S, Time: I, DisplayMessage: S, Details: map(S), Message: S, FailsTask: B, RestartReason: S, SetupError: S, DriverError: S,
  DriverMessage: S, ExitCode: I, Signal: I, KillReason: S, KillTimeout: D, KillError: S, StartDelay: I, DownloadError: S,
  ValidationError: S, DiskLimit: I, FailedSibling: S, VaultError: S, TaskSignalReason: S, TaskSignal: S, GenericSource: S,
});
export const TaskState = struct({ State: S, Failed: B, Restarts: U, LastRestart: T, StartedAt: T, FinishedAt: T, Events: slice(ptr(TaskEvent)) });
export const AllocDeploymentStatus = struct({ Healthy: ptr(B), Timestamp: T, Canary: B, ModifyIndex: U });
export const AllocatedResources = struct({
  Tasks: map(struct({ Cpu: struct({ CpuShares: I }), Memory: struct({ MemoryMB: I, MemoryMaxMB: I }), Networks: slice(NetworkResource) })),
  Shared: struct({ DiskMB: I, Networks: slice(NetworkResource), Ports: slice(struct({ Label: S, Value: I, To: I, HostIP: S })) }),
});
export const RescheduleTracker = struct({ Events: slice(struct({ RescheduleTime: I, PrevAllocID: S, PrevNodeID: S, Delay: D })) });
const allocCommon = {
  ID: S, Namespace: S, EvalID: S, Name: S, NodeID: S, NodeName: S, JobID: S, TaskGroup: S,
  AllocatedResources: ptr(AllocatedResources), DesiredStatus: S, DesiredDescription: S,
  DesiredTransition: struct({ Migrate: ptr(B), Reschedule: ptr(B), ForceReschedule: ptr(B) }), ClientStatus: S, ClientDescription: S,
  TaskStates: map(TaskState), DeploymentStatus: ptr(AllocDeploymentStatus), FollowupEvalID: S, PreviousAllocation: S,
  NextAllocation: S, RescheduleTracker: ptr(RescheduleTracker), CreateIndex: U, ModifyIndex: U, CreateTime: I, ModifyTime: I,
} satisfies Record<string, GoType>;
export const Allocation = struct({
  ...allocCommon, Job: ptr(Job), Metrics: ptr(AllocationMetric), DeploymentID: S, PreemptedAllocations: slice(S),
  PreemptedByAllocation: S, AllocModifyIndex: U,
});
export const AllocListStub = struct({ ...allocCommon, JobType: S, JobVersion: U });
export const Evaluation = struct({
  ID: S, Priority: I, Type: S, TriggeredBy: S, Namespace: S, JobID: S, JobModifyIndex: U, NodeID: S, NodeModifyIndex: U,
  DeploymentID: S, Status: S, StatusDescription: S, Wait: D, WaitUntil: T, NextEval: S, PreviousEval: S, BlockedEval: S,
  RelatedEvals: slice(struct({ ID: S })), FailedTGAllocs: map(ptr(AllocationMetric)), ClassEligibility: map(B),
  EscapedComputedClass: B, QuotaLimitReached: S, AnnotatePlan: B, QueuedAllocations: map(I), SnapshotIndex: U,
  CreateIndex: U, ModifyIndex: U, CreateTime: I, ModifyTime: I,
});
export const DriverInfo = struct({ Attributes: map(S), Detected: B, Healthy: B, HealthDescription: S, UpdateTime: T });
export const DrainMetadata = struct({ StartedAt: T, UpdatedAt: T, Status: S, AccessorID: S, Meta: map(S) });
export const Node = struct({
  ID: S, Datacenter: S, Name: S, HTTPAddr: S, TLSEnabled: B, Attributes: map(S),
  NodeResources: ptr(struct({
    Cpu: struct({ CpuShares: I, TotalCpuCores: U, ReservableCpuCores: slice(U) }), Memory: struct({ MemoryMB: I }),
    Disk: struct({ DiskMB: I }), Networks: slice(NetworkResource), MinDynamicPort: I, MaxDynamicPort: I,
  })),
  ReservedResources: ptr(struct({
    Cpu: struct({ CpuShares: U }), Memory: struct({ MemoryMB: U }), Disk: struct({ DiskMB: U }), Networks: struct({ ReservedHostPorts: S }),
  })),
  Links: map(S), Meta: map(S), NodeClass: S, NodePool: S, Drain: B,
  DrainStrategy: ptr(struct({ Deadline: D, IgnoreSystemJobs: B, ForceDeadline: T, StartedAt: T })),
  SchedulingEligibility: S, Status: S, StatusDescription: S, StatusUpdatedAt: I,
  Events: slice(struct({ Message: S, Subsystem: S, Details: map(S), Timestamp: T, CreateIndex: U })),
  Drivers: map(ptr(DriverInfo)), LastDrain: ptr(DrainMetadata), CreateIndex: U, ModifyIndex: U,
});
export const NodeListStub = struct({
  Address: S, ID: S, Attributes: map(S), Datacenter: S, Name: S, NodeClass: S, NodePool: S, Version: S, Drain: B,
  SchedulingEligibility: S, Status: S, StatusDescription: S, Drivers: map(ptr(DriverInfo)), LastDrain: ptr(DrainMetadata),
  CreateIndex: U, ModifyIndex: U,
});
export const JobRegisterResponse = struct({ EvalID: S, EvalCreateIndex: U, JobModifyIndex: U, Warnings: S, LastIndex: U, KnownLeader: B });
export const JobDeregisterResponse = struct({ EvalID: S, EvalCreateIndex: U, JobModifyIndex: U, VolumeEvalID: S, VolumeEvalIndex: U });
const FieldDiff = struct({ Type: S, Name: S, Old: S, New: S, Annotations: slice(S) });
const InnerObjectDiff = struct({ Type: S, Name: S, Fields: slice(FieldDiff) });
const ObjectDiff = struct({ Type: S, Name: S, Fields: slice(FieldDiff), Objects: slice(InnerObjectDiff) });
const TaskDiff = struct({ Type: S, Name: S, Fields: slice(FieldDiff), Objects: slice(ObjectDiff), Annotations: slice(S) });
const TaskGroupDiff = struct({ Type: S, Name: S, Fields: slice(FieldDiff), Objects: slice(ObjectDiff), Tasks: slice(TaskDiff), Updates: map(U) });
export const JobDiff = struct({ Type: S, ID: S, Fields: slice(FieldDiff), Objects: slice(ObjectDiff), TaskGroups: slice(TaskGroupDiff) });
export const JobPlanResponse = struct({
  JobModifyIndex: U, CreatedEvals: slice(Evaluation),
  Diff: ptr(JobDiff),
  Annotations: ptr(struct({
    DesiredTGUpdates: map(ptr(struct({ Ignore: U, Place: U, Migrate: U, Stop: U, InPlaceUpdate: U, DestructiveUpdate: U, Canary: U, Preemptions: U }))),
  })),
  FailedTGAllocs: map(ptr(AllocationMetric)), NextPeriodicLaunch: T, Warnings: S,
});
export const JobVersionsResponse = struct({ Versions: slice(Job), Diffs: slice(JobDiff) });
export const JobScaleStatusResponse = struct({
  JobID: S, Namespace: S, JobCreateIndex: U, JobModifyIndex: U, JobStopped: B,
  TaskGroups: map(struct({ Desired: I, Placed: I, Running: I, Healthy: I, Unhealthy: I, Events: slice(struct({ Time: U, Count: ptr(I), Message: S })) })),
});
export const AgentMember = struct({
  Name: S, Addr: S, Port: U, Tags: map(S), Status: S, ProtocolMin: U, ProtocolMax: U, ProtocolCur: U, DelegateMin: U, DelegateMax: U, DelegateCur: U,
});
export const AgentSelf = struct({ config: map('any'), member: AgentMember, stats: map(map(S)) });
export const ServerMembers = struct({ ServerName: S, ServerRegion: S, ServerDC: S, Members: slice(ptr(AgentMember)) });
export const AgentHealthResponse = struct({ client: ptr(struct({ ok: B, message: S })), server: ptr(struct({ ok: B, message: S })) });
export const SearchResponse = struct({ Matches: map(slice(S)), Truncations: map(B) });
export const FuzzySearchResponse = struct({ Matches: map(slice(struct({ ID: S, Scope: slice(S) }))), Truncations: map(B) });
export const Namespace = struct({ Name: S, Description: S, Quota: S, Meta: map(S), CreateIndex: U, ModifyIndex: U });
export const RaftConfiguration = struct({
  Servers: slice(ptr(struct({ ID: S, Node: S, Address: S, Leader: B, Voter: B, RaftProtocol: S }))), Index: U,
});
export const AllocStopResponse = struct({ EvalID: S, Index: U });
export const NodeEligibilityUpdateResponse = struct({ EvalIDs: slice(S), EvalCreateIndex: U, NodeModifyIndex: U });
export const MetricsSummary = struct({
  Timestamp: S,
  Gauges: slice(struct({ Name: S, Value: 'float', Labels: map(S) })),
  Counters: slice(struct({ Name: S, Count: I, Sum: 'float', Labels: map(S) })),
  Samples: slice(struct({ Name: S, Count: I, Sum: 'float', Labels: map(S) })),
});
export const StringSlice: GoType = slice(S);
export const StringValue: GoType = S;
