package compat

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// runningAlloc registers a one-task raw_exec job on the -dev agent and waits for its allocation to run.
func runningAlloc(t *testing.T, id string) *api.Allocation {
	t.Helper()
	job, err := devClient.Jobs().ParseHCL(jobHCL(id, "infra", "1"), true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := devClient.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		stubs, _, err := devClient.Jobs().Allocations(id, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stubs {
			if s.ClientStatus == "running" {
				alloc, _, err := devClient.Allocations().Info(s.ID, nil)
				if err != nil {
					t.Fatal(err)
				}
				return alloc
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("job %s: no running allocation", id)
	return nil
}

func TestAllocResourcesEventsAndClientRoutes(t *testing.T) {
	alloc := runningAlloc(t, "c-web")
	// What `nomad node status <id>` dereferences unchecked.
	if alloc.Resources == nil || alloc.Resources.CPU == nil || *alloc.Resources.CPU != 100 || alloc.TaskResources["t"] == nil {
		t.Fatalf("alloc resources: %+v task resources %+v", alloc.Resources, alloc.TaskResources)
	}
	node, _, err := devClient.Nodes().Info(alloc.NodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if node.Resources == nil || node.Resources.CPU == nil || *node.Resources.CPU == 0 {
		t.Fatalf("node resources: %+v", node.Resources)
	}

	// Allocation events decode in the Go client and carry no Job.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := devClient.EventStream().Stream(ctx, map[api.Topic][]string{api.TopicAllocation: {"*"}}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for !found {
		batch, ok := <-stream
		if !ok {
			t.Fatal("event stream ended before an allocation event")
		}
		if batch.Err != nil {
			t.Fatal(batch.Err)
		}
		for _, e := range batch.Events {
			a, err := e.Allocation()
			if err != nil {
				t.Fatalf("decoding an allocation event: %v", err)
			}
			if a != nil {
				if a.Job != nil {
					t.Fatal("allocation event carries its job")
				}
				found = true
			}
		}
	}
	cancel()

	stats, err := devClient.Nodes().Stats(alloc.NodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if stats.Memory == nil || stats.Memory.Total == 0 || len(stats.CPU) == 0 || len(stats.DiskStats) == 0 {
		t.Fatalf("host stats: %+v", stats)
	}
	checks, err := devClient.Allocations().Checks(alloc.ID, nil)
	if err != nil || len(checks) != 0 {
		t.Fatalf("checks: %v %v", checks, err)
	}

	team := "infra"
	applied, err := devClient.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{NodeID: alloc.NodeID, Meta: map[string]*string{"team": &team}}, nil)
	if err != nil || applied.Meta["team"] != "infra" || applied.Dynamic["team"] == nil {
		t.Fatalf("meta apply: %+v %v", applied, err)
	}
	read, err := devClient.Nodes().Meta().Read(alloc.NodeID, nil)
	if err != nil || read.Meta["team"] != "infra" {
		t.Fatalf("meta read: %+v %v", read, err)
	}
	bad := "x"
	if _, err := devClient.Nodes().Meta().Apply(&api.NodeMetaApplyRequest{Meta: map[string]*string{"bad key": &bad}}, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("bad meta key: want a 400, got %v", err)
	}

	if err := devClient.Allocations().GC(alloc, nil); err == nil || !strings.Contains(err.Error(), "still running") {
		t.Fatalf("gc of a running allocation: want refused, got %v", err)
	}
	if _, _, err := devClient.Jobs().Deregister("c-web", false, nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		a, _, err := devClient.Allocations().Info(alloc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.ClientStatus == "complete" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("allocation did not stop: %s", a.ClientStatus)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := devClient.Allocations().GC(alloc, nil); err != nil {
		t.Fatalf("gc: %v", err)
	}
	if err := devClient.Nodes().GC(alloc.NodeID, nil); err != nil {
		t.Fatalf("node gc: %v", err)
	}
}

func TestNodePoolsEvaluatePurge(t *testing.T) {
	pools, _, err := client.NodePools().List(nil)
	if err != nil || len(pools) < 2 || pools[0].Name != "all" || pools[1].Name != "default" {
		t.Fatalf("built-in pools: %v %v", pools, err)
	}
	if _, err := client.NodePools().Register(&api.NodePool{Name: "compat-gpu", Description: "GPU", Meta: map[string]string{"a": "b"}}, nil); err != nil {
		t.Fatal(err)
	}
	pool, _, err := client.NodePools().Info("compat-gpu", nil)
	if err != nil || pool.Description != "GPU" || pool.Meta["a"] != "b" {
		t.Fatalf("info: %+v %v", pool, err)
	}
	if _, err := client.NodePools().Register(&api.NodePool{Name: "all"}, nil); err == nil || !strings.Contains(err.Error(), "not allowed") {
		t.Fatalf("modifying a built-in pool: want refused, got %v", err)
	}
	if _, _, err := client.NodePools().Info("compat-nope", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unknown pool: want a 404, got %v", err)
	}
	nodes, _, err := client.NodePools().ListNodes("compat-gpu", nil)
	if err != nil || len(nodes) != 0 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	jobs, _, err := client.NodePools().ListJobs("default", nil)
	if err != nil {
		t.Fatalf("jobs: %v %v", jobs, err)
	}
	if _, err := client.NodePools().Delete("compat-gpu", nil); err != nil {
		t.Fatal(err)
	}

	// Node evaluate and purge against the -dev agent's own node.
	alloc := runningAlloc(t, "c-evaluated")
	evalID, _, err := devClient.Nodes().ForceEvaluate(alloc.NodeID, nil)
	if err != nil || evalID == "" {
		t.Fatalf("force evaluate: %q %v", evalID, err)
	}
	withResources, _, err := devClient.Nodes().List(&api.QueryOptions{Params: map[string]string{"resources": "true"}})
	if err != nil || len(withResources) != 1 || withResources[0].NodeResources == nil || withResources[0].NodeResources.Cpu.CpuShares == 0 {
		t.Fatalf("nodes?resources=true: %v", err)
	}
	if _, _, err := devClient.Jobs().Deregister("c-evaluated", true, nil); err != nil {
		t.Fatal(err)
	}
	if _, _, err := client.Nodes().Purge("no-such-node", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("purging an unknown node: want a 404, got %v", err)
	}
}

func TestEvalCountDeleteAndUnblock(t *testing.T) {
	register(t, "e-count", "infra", "1")
	// The registration's evaluation may still be scheduled (and leave a blocked one behind):
	// count and list once the job's evaluations have settled.
	var evals []*api.Evaluation
	for deadline := time.Now().Add(10 * time.Second); ; {
		list, _, err := client.Evaluations().List(&api.QueryOptions{Filter: `JobID == "e-count"`})
		if err != nil {
			t.Fatal(err)
		}
		pending := false
		for _, e := range list {
			pending = pending || e.Status == "pending"
		}
		if !pending || time.Now().After(deadline) {
			evals = list
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	count, _, err := client.Evaluations().Count(&api.QueryOptions{Filter: `JobID == "e-count"`})
	if err != nil || len(evals) == 0 || count.Count != len(evals) {
		t.Fatalf("count %+v of %d listed evaluations: %v", count, len(evals), err)
	}
	// The broker runs: deletion is refused and nothing changes.
	if _, err := client.Evaluations().Delete([]string{evals[0].ID}, nil); err == nil || !strings.Contains(err.Error(), "eval broker must be paused") {
		t.Fatalf("delete with the broker running: want refused, got %v", err)
	}
	if _, _, err := client.Evaluations().DeleteOpts(&api.EvalDeleteRequest{Filter: `JobID == "e-count"`}, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("delete by filter with the broker running: want a 400, got %v", err)
	}
	if _, _, err := client.Evaluations().Info(evals[0].ID, nil); err != nil {
		t.Fatalf("the evaluation is still there: %v", err)
	}
	if _, _, err := client.Deployments().Unblock("00000000-0000-0000-0000-000000000000", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("unblocking an unknown deployment: want a 404, got %v", err)
	}
}

func TestVersionTagsAndServices(t *testing.T) {
	register(t, "t-tagged", "infra", "1")
	register(t, "t-tagged", "infra", "2")
	if _, err := client.Jobs().TagVersion("t-tagged", 0, "first", "the first version", nil); err != nil {
		t.Fatal(err)
	}
	versions, _, _, err := client.Jobs().Versions("t-tagged", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	var tag *api.JobVersionTag
	for _, v := range versions {
		if *v.Version == 0 {
			tag = v.VersionTag
		}
	}
	if tag == nil || tag.Name != "first" || tag.Description != "the first version" || tag.TaggedTime == 0 {
		t.Fatalf("version 0 tag: %+v", tag)
	}
	if _, err := client.Jobs().TagVersion("t-tagged", 1, "first", "", nil); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Fatalf("a name on two versions: want refused, got %v", err)
	}
	if _, err := client.Jobs().UntagVersion("t-tagged", "first", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Jobs().UntagVersion("t-tagged", "first", nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("untagging twice: want a 404, got %v", err)
	}
	services, _, err := client.Jobs().Services("t-tagged", nil)
	if err != nil || len(services) != 0 {
		t.Fatalf("services: %v %v", services, err)
	}
}

func TestValidateJob(t *testing.T) {
	job, err := client.Jobs().ParseHCL(jobHCL("v-checked", "infra", "1"), true)
	if err != nil {
		t.Fatal(err)
	}
	resp, _, err := client.Jobs().Validate(job, nil)
	if err != nil || resp.Error != "" || len(resp.ValidationErrors) != 0 {
		t.Fatalf("a valid job: %+v %v", resp, err)
	}
	job.TaskGroups[0].Tasks[0].Driver = ""
	resp, _, err = client.Jobs().Validate(job, nil)
	if err != nil || resp.Error == "" || len(resp.ValidationErrors) != 1 {
		t.Fatalf("a job without a driver: %+v %v", resp, err)
	}
	if _, _, err := client.Jobs().Info("v-checked", nil); err == nil {
		t.Fatal("validation registered the job")
	}
}

func TestAgentMonitor(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	frames, errs := client.Agent().Monitor(stop, &api.QueryOptions{Params: map[string]string{"log_level": "info"}})
	// The monitor is subscribed once the answer's headers arrive; keep logging until a line shows.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case f := <-frames:
			if f != nil && strings.Contains(string(f.Data), "forced garbage collection") {
				return
			}
		case err := <-errs:
			t.Fatalf("monitor: %v", err)
		case <-tick.C:
			if err := client.System().GarbageCollect(); err != nil {
				t.Fatal(err)
			}
		case <-deadline:
			t.Fatal("no log line arrived through the monitor")
		}
	}
}

func TestServiceCatalogue(t *testing.T) {
	list, _, err := client.Services().List(nil)
	if err != nil || len(list) != 0 {
		t.Fatalf("services: %v %v", list, err)
	}
	regs, _, err := client.Services().Get("web", nil)
	if err != nil || len(regs) != 0 {
		t.Fatalf("service web: %v %v", regs, err)
	}
}

func TestNomadMetricNames(t *testing.T) {
	register(t, "m-job", "infra", "1")
	summary, _, err := client.Operator().MetricsSummary(nil)
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, g := range summary.Gauges {
		found[g.Name] = true
	}
	for _, name := range []string{"nomad.nomad.job_status.pending", "nomad.nomad.job_status.running", "nomad.nomad.job_status.dead", "nomad.nomad.heartbeat.active", "nomad.runtime.alloc_bytes"} {
		if !found[name] {
			t.Errorf("gauge %s missing", name)
		}
	}
}
