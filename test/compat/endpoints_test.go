package compat

import (
	"strings"
	"testing"

	"github.com/hashicorp/nomad/api"
)

func jobHCL(id, team, env string) string {
	return `
job "` + id + `" {
  datacenters = ["dc1"]
  meta {
    team = "` + team + `"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      env {
        V = "` + env + `"
      }
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
    }
  }
}`
}

func register(t *testing.T, id, team, env string) {
	t.Helper()
	job, err := client.Jobs().ParseHCL(jobHCL(id, team, env), true)
	if err != nil {
		t.Fatalf("parse %s: %v", id, err)
	}
	if _, _, err := client.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
}

func TestListFilterAndPagination(t *testing.T) {
	register(t, "f-alpha", "infra", "1")
	register(t, "f-bravo", "web", "1")
	register(t, "f-charlie", "infra", "1")

	jobs, _, err := client.Jobs().List(&api.QueryOptions{Prefix: "f-", Filter: `Meta.team == "infra"`})
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].ID != "f-alpha" || jobs[1].ID != "f-charlie" {
		t.Fatalf("filtered list: got %v", ids(jobs))
	}
	page, meta, err := client.Jobs().List(&api.QueryOptions{Prefix: "f-", PerPage: 2})
	if err != nil {
		t.Fatal(err)
	}
	// Nomad's Job.List tokens are "namespace.ID" (StructsTokenizer WithNamespace and WithID).
	if len(page) != 2 || meta.NextToken != "default.f-charlie" {
		t.Fatalf("first page: %v next %q", ids(page), meta.NextToken)
	}
	rest, meta, err := client.Jobs().List(&api.QueryOptions{Prefix: "f-", PerPage: 2, NextToken: meta.NextToken})
	if err != nil {
		t.Fatal(err)
	}
	if len(rest) != 1 || rest[0].ID != "f-charlie" || meta.NextToken != "" {
		t.Fatalf("second page: %v next %q", ids(rest), meta.NextToken)
	}
	_, _, err = client.Jobs().List(&api.QueryOptions{Filter: `Meta.team = "x"`})
	if err == nil || !strings.Contains(err.Error(), "400") || !strings.Contains(err.Error(), "failed to read filter expression") {
		t.Fatalf("malformed filter: want a 400 naming it, got %v", err)
	}
	if _, _, err := client.Evaluations().List(&api.QueryOptions{Filter: `JobID == "f-alpha"`, PerPage: 1}); err != nil {
		t.Fatalf("evaluations with filter and per_page: %v", err)
	}
}

func ids(jobs []*api.JobListStub) []string {
	out := []string{}
	for _, j := range jobs {
		out = append(out, j.ID)
	}
	return out
}

func TestRevertStableScaleSubmission(t *testing.T) {
	register(t, "r-web", "web", "one")
	register(t, "r-web", "web", "two")

	if _, _, err := client.Jobs().Stable("r-web", 0, true, nil); err != nil {
		t.Fatalf("stable: %v", err)
	}
	versions, _, _, err := client.Jobs().Versions("r-web", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	stable := false
	for _, v := range versions {
		if *v.Version == 0 {
			stable = *v.Stable
		}
	}
	if !stable {
		t.Fatal("version 0 is not stable after Stable")
	}

	prior := uint64(1)
	res, _, err := client.Jobs().Revert("r-web", 0, &prior, nil, "", "")
	if err != nil {
		t.Fatalf("revert: %v", err)
	}
	if res.EvalID == "" {
		t.Fatal("revert created no evaluation")
	}
	job, _, err := client.Jobs().Info("r-web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if *job.Version != 2 || job.TaskGroups[0].Tasks[0].Env["V"] != "one" {
		t.Fatalf("after revert: version %d env %v", *job.Version, job.TaskGroups[0].Tasks[0].Env)
	}

	count := 3
	if _, _, err := client.Jobs().Scale("r-web", "g", &count, "more", false, nil, nil); err != nil {
		t.Fatalf("scale: %v", err)
	}
	status, _, err := client.Jobs().ScaleStatus("r-web", nil)
	if err != nil {
		t.Fatal(err)
	}
	if status.TaskGroups["g"].Desired != 3 {
		t.Fatalf("scale status: desired %d", status.TaskGroups["g"].Desired)
	}
	events := status.TaskGroups["g"].Events
	if len(events) != 1 || events[0].Count == nil || *events[0].Count != 3 || events[0].PreviousCount != 1 || events[0].Message != "more" || events[0].EvalID == nil {
		t.Fatalf("scaling events: %+v", events)
	}
	bad := -1
	if _, _, err := client.Jobs().Scale("r-web", "g", &bad, "", false, nil, nil); err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("negative count: want a 400, got %v", err)
	}

	// The Go client registers without a Submission; one sent by hand comes back.
	if _, _, err := client.Jobs().Submission("r-web", 0, nil); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("submission of a version registered without source: want 404, got %v", err)
	}
	parsed, err := client.Jobs().ParseHCL(jobHCL("s-web", "web", "src"), true)
	if err != nil {
		t.Fatal(err)
	}
	req := &api.JobRegisterRequest{Job: parsed, Submission: &api.JobSubmission{Source: jobHCL("s-web", "web", "src"), Format: "hcl2"}}
	var out api.JobRegisterResponse
	if _, err := client.Raw().Write("/v1/jobs", req, &out, nil); err != nil {
		t.Fatalf("register with submission: %v", err)
	}
	sub, _, err := client.Jobs().Submission("s-web", 0, nil)
	if err != nil {
		t.Fatalf("submission: %v", err)
	}
	if sub.Format != "hcl2" || !strings.Contains(sub.Source, `V = "src"`) {
		t.Fatalf("submission: %+v", sub)
	}
}

func TestOperatorSystemAgentAcl(t *testing.T) {
	cfg, _, err := client.Operator().SchedulerGetConfiguration(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SchedulerConfig.SchedulerAlgorithm != api.SchedulerAlgorithmBinpack {
		t.Fatalf("default algorithm %q", cfg.SchedulerConfig.SchedulerAlgorithm)
	}
	next := *cfg.SchedulerConfig
	next.SchedulerAlgorithm = api.SchedulerAlgorithmSpread
	set, _, err := client.Operator().SchedulerCASConfiguration(&next, nil)
	if err != nil || !set.Updated {
		t.Fatalf("CAS set: %v %+v", err, set)
	}
	stale, _, err := client.Operator().SchedulerCASConfiguration(&next, nil)
	if err != nil || stale.Updated {
		t.Fatalf("stale CAS set: %v %+v", err, stale)
	}
	cfg, _, err = client.Operator().SchedulerGetConfiguration(nil)
	if err != nil || cfg.SchedulerConfig.SchedulerAlgorithm != api.SchedulerAlgorithmSpread {
		t.Fatalf("after set: %v %+v", err, cfg)
	}
	next.SchedulerAlgorithm = api.SchedulerAlgorithmBinpack
	if _, _, err := client.Operator().SchedulerSetConfiguration(&next, nil); err != nil {
		t.Fatal(err)
	}

	if err := client.System().GarbageCollect(); err != nil {
		t.Fatalf("system gc: %v", err)
	}
	if err := client.System().ReconcileSummaries(); err != nil {
		t.Fatalf("reconcile summaries: %v", err)
	}
	host, err := client.Agent().Host("", "", nil)
	if err != nil {
		t.Fatalf("agent host: %v", err)
	}
	if host.HostData == nil || host.HostData.OS == "" || len(host.HostData.Disk) == 0 {
		t.Fatalf("agent host: %+v", host)
	}
	self, _, err := client.ACLTokens().Self(nil)
	if err != nil {
		t.Fatalf("acl token self: %v", err)
	}
	if self.AccessorID != "acls-disabled" {
		t.Fatalf("acl token self: %+v", self)
	}
	if _, _, err := client.Operator().LicenseGet(nil); err == nil || !strings.Contains(err.Error(), "Nomad Enterprise only endpoint") {
		t.Fatalf("license: want the Enterprise-only error, got %v", err)
	}
}

func TestJobStableMarksTheVersion(t *testing.T) {
	register(t, "st-alpha", "infra", "1")
	res, _, err := client.Jobs().Stable("st-alpha", 0, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobModifyIndex == 0 {
		t.Fatalf("Stable answered JobModifyIndex 0: %+v", res)
	}
	versions, _, _, err := client.Jobs().Versions("st-alpha", false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(versions) != 1 || versions[0].Stable == nil || !*versions[0].Stable {
		t.Fatalf("version 0 is not marked stable: %+v", versions)
	}
}
