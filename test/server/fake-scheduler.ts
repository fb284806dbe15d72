/**
 * A tiny scheduler for server tests: keeps Count running allocations of every group on the
 * first schedulable node, stops everything of a stopped or missing job, then completes the eval.
 */
import type { SchedulerFactory } from '../../src/scheduler/interfaces.js';
import { emptyPlan, generateId, isNodeSchedulable, type Allocation } from '../../src/structs/index.js';

export const fakeSchedulerFactory: SchedulerFactory = (state, planner) => ({
  async process(e) {
    const job = state.jobById(e.Namespace, e.JobID);
    const plan = emptyPlan(e.ID, '', e.Priority, job ?? null);
    const existing = state.allocsByJob(e.Namespace, e.JobID).filter((a) => a.DesiredStatus === 'run' && a.ClientStatus !== 'failed' && a.ClientStatus !== 'lost');
    const lostNodes = new Set([...state.nodes()].filter((n) => n.Status === 'down').map((n) => n.ID));
    const live: Allocation[] = [];
    for (const a of existing) {
      if (!job || job.Stop || lostNodes.has(a.NodeID)) {
        (plan.NodeUpdate[a.NodeID] ??= []).push({ ...a, DesiredStatus: 'stop', ClientStatus: lostNodes.has(a.NodeID) ? 'lost' : a.ClientStatus });
      } else live.push(a);
    }
    let queued = 0;
    if (job && !job.Stop) {
      const node = [...state.nodes()].find(isNodeSchedulable);
      for (const tg of job.TaskGroups) {
        const have = live.filter((a) => a.TaskGroup === tg.Name).length;
        for (let i = have; i < tg.Count; i++) {
          if (!node) {
            queued++;
            continue;
          }
          const t = tg.Tasks[0]!;
          (plan.NodeAllocation[node.ID] ??= []).push({
            ID: generateId(), Namespace: job.Namespace, EvalID: e.ID, Name: `${job.ID}.${tg.Name}[${i}]`,
            NodeID: node.ID, NodeName: node.Name, JobID: job.ID, Job: job, TaskGroup: tg.Name,
            AllocatedResources: {
              Tasks: { [t.Name]: { Cpu: { CpuShares: t.Resources.CPU, ReservedCores: null }, Memory: { MemoryMB: t.Resources.MemoryMB, MemoryMaxMB: 0 }, Networks: null, Devices: null } },
              TaskLifecycles: {}, Shared: { Networks: null, DiskMB: 0, Ports: null },
            },
            Metrics: null, DesiredStatus: 'run', DesiredDescription: '', DesiredTransition: {}, ClientStatus: 'pending',
            ClientDescription: '', TaskStates: null, DeploymentID: '', DeploymentStatus: null, FollowupEvalID: '',
            PreviousAllocation: '', NextAllocation: '', RescheduleTracker: null, PreemptedAllocations: null,
            PreemptedByAllocation: '', CreateIndex: 0, ModifyIndex: 0, AllocModifyIndex: 0, CreateTime: 0, ModifyTime: 0,
          });
        }
      }
    }
    if (Object.keys(plan.NodeAllocation).length || Object.keys(plan.NodeUpdate).length) await planner.submitPlan(plan);
    if (queued > 0) {
      await planner.reblockEval({ ...e, Status: 'blocked', ID: e.Status === 'blocked' ? e.ID : generateId(), PreviousEval: e.ID });
    }
    await planner.updateEval({ ...e, Status: 'complete', QueuedAllocations: null });
  },
});
