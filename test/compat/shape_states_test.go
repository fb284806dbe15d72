package compat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// TestShapesAcrossStates drives the states whose objects carry the most optional shapes —
// canary deployments (running, promoted, failed, a canary stopped by a newer version), failed
// and rescheduled allocations, evaluations with failed placements, periodic and parameterized
// jobs, a drained node, ACL tokens with an expiry — and reads every list and object in each.
// The recording transport decodes each answer strictly (shape_recorder_test.go); this test
// fails on what those answers got wrong.
func TestShapesAcrossStates(t *testing.T) {
	c := devClient
	readAll := func() {
		t.Helper()
		if _, _, err := c.Allocations().List(nil); err != nil {
			t.Fatalf("allocations: %v", err)
		}
		if _, _, err := c.Allocations().List(&api.QueryOptions{Params: map[string]string{"resources": "true", "task_states": "true"}}); err != nil {
			t.Fatalf("allocations with resources: %v", err)
		}
		nodes, _, err := c.Nodes().List(&api.QueryOptions{Params: map[string]string{"resources": "true", "os": "true"}})
		if err != nil {
			t.Fatalf("nodes: %v", err)
		}
		for _, n := range nodes {
			if _, _, err := c.Nodes().Info(n.ID, nil); err != nil {
				t.Fatalf("node: %v", err)
			}
			if _, _, err := c.Nodes().Allocations(n.ID, nil); err != nil {
				t.Fatalf("node allocations: %v", err)
			}
		}
		if _, _, err := c.Evaluations().List(nil); err != nil {
			t.Fatalf("evaluations: %v", err)
		}
		deps, _, err := c.Deployments().List(nil)
		if err != nil {
			t.Fatalf("deployments: %v", err)
		}
		for _, d := range deps {
			if _, _, err := c.Deployments().Allocations(d.ID, nil); err != nil {
				t.Fatalf("deployment allocations: %v", err)
			}
		}
		jobs, _, err := c.Jobs().List(nil)
		if err != nil {
			t.Fatalf("jobs: %v", err)
		}
		for _, j := range jobs {
			if _, _, err := c.Jobs().Info(j.ID, nil); err != nil {
				t.Fatalf("job %s: %v", j.ID, err)
			}
			if _, _, err := c.Jobs().Summary(j.ID, nil); err != nil {
				t.Fatalf("job summary %s: %v", j.ID, err)
			}
			if _, _, err := c.Jobs().Allocations(j.ID, true, nil); err != nil {
				t.Fatalf("job allocations %s: %v", j.ID, err)
			}
			if _, _, err := c.Jobs().Evaluations(j.ID, nil); err != nil {
				t.Fatalf("job evaluations %s: %v", j.ID, err)
			}
			if _, _, err := c.Jobs().Deployments(j.ID, true, nil); err != nil {
				t.Fatalf("job deployments %s: %v", j.ID, err)
			}
		}
	}

	// A canary deployment: running, promoted; a failed one; a canary a newer version stops.
	registerHCL(t, c, canaryHCL("sh-canary", "1", "60"))
	waitFor(t, "the first version's deployment to succeed", func() bool { return latestDeployment(t, c, "sh-canary", 0, "successful") })
	registerHCL(t, c, canaryHCL("sh-canary", "2", "60"))
	waitFor(t, "the canary to be healthy", func() bool { return canaryHealthy(t, c, "sh-canary", 1) })
	readAll()
	dep, _, err := c.Jobs().LatestDeployment("sh-canary", nil)
	if err != nil || dep == nil {
		t.Fatalf("latest deployment: %v %v", dep, err)
	}
	if _, _, err := c.Deployments().PromoteAll(dep.ID, nil); err != nil {
		t.Fatalf("promote: %v", err)
	}
	waitFor(t, "the promoted deployment to succeed", func() bool { return latestDeployment(t, c, "sh-canary", 1, "successful") })
	readAll()
	registerHCL(t, c, canaryHCL("sh-canary", "3", "60"))
	waitFor(t, "the third version's canary", func() bool { return canaryHealthy(t, c, "sh-canary", 2) })
	registerHCL(t, c, canaryHCL("sh-canary", "4", "60"))
	waitFor(t, "the fourth version's canary", func() bool { return canaryHealthy(t, c, "sh-canary", 3) })
	dep, _, err = c.Jobs().LatestDeployment("sh-canary", nil)
	if err != nil || dep == nil {
		t.Fatalf("latest deployment: %v %v", dep, err)
	}
	if _, _, err := c.Deployments().Fail(dep.ID, nil); err != nil {
		t.Fatalf("fail: %v", err)
	}
	readAll()

	// A batch job whose task fails, rescheduled once, and failed again.
	registerHCL(t, c, failingHCL("sh-failing"))
	waitFor(t, "the rescheduled allocation to fail", func() bool {
		stubs, _, err := c.Jobs().Allocations("sh-failing", true, nil)
		if err != nil {
			t.Fatal(err)
		}
		failed := 0
		for _, s := range stubs {
			if s.ClientStatus == "failed" {
				failed++
			}
		}
		return failed == 2
	})

	// An evaluation whose placement failed (and the blocked evaluation it leaves).
	registerHCL(t, c, strings.Replace(jobHCL("sh-huge", "infra", "1"), `args    = ["60"]`, `args    = ["60"]
      }
      resources {
        cpu = 9000000`, 1))
	waitFor(t, "the failed placement", func() bool {
		evals, _, err := c.Jobs().Evaluations("sh-huge", nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evals {
			if len(e.FailedTGAllocs) > 0 {
				return true
			}
		}
		return false
	})

	// Periodic and parameterized jobs and their children.
	registerHCL(t, c, strings.Replace(jobHCL("sh-periodic", "infra", "1"), `datacenters = ["dc1"]`, `datacenters = ["dc1"]
  type = "batch"
  periodic {
    crons = ["0 0 1 1 *"]
    prohibit_overlap = true
  }`, 1))
	if _, _, err := c.Jobs().PeriodicForce("sh-periodic", nil); err != nil {
		t.Fatalf("periodic force: %v", err)
	}
	registerHCL(t, c, strings.Replace(jobHCL("sh-param", "infra", "1"), `datacenters = ["dc1"]`, `datacenters = ["dc1"]
  type = "batch"
  parameterized {
    meta_optional = ["who"]
  }`, 1))
	if _, _, err := c.Jobs().Dispatch("sh-param", map[string]string{"who": "me"}, []byte("payload"), "", nil); err != nil {
		t.Fatalf("dispatch: %v", err)
	}
	readAll()

	// A draining node, then one whose drain was cancelled.
	nodes, _, err := c.Nodes().List(nil)
	if err != nil || len(nodes) != 1 {
		t.Fatalf("nodes: %v %v", nodes, err)
	}
	nodeID := nodes[0].ID
	if _, err := c.Nodes().UpdateDrainOpts(nodeID, &api.DrainOptions{DrainSpec: &api.DrainSpec{Deadline: time.Hour}, Meta: map[string]string{"why": "compat"}}, nil); err != nil {
		t.Fatalf("drain: %v", err)
	}
	readAll()
	if _, err := c.Nodes().UpdateDrainOpts(nodeID, &api.DrainOptions{MarkEligible: true}, nil); err != nil {
		t.Fatalf("cancel drain: %v", err)
	}
	readAll()
	node, _, err := c.Nodes().Info(nodeID, nil)
	if err != nil {
		t.Fatal(err)
	}
	// What `nomad node status -self` and `-verbose` dereference (computeNodeTotalResources).
	if node.NodeResources == nil || node.ReservedResources == nil || node.NodeResources.Cpu.CpuShares == 0 {
		t.Fatalf("node resources: %+v reserved %+v", node.NodeResources, node.ReservedResources)
	}

	for _, id := range []string{"sh-canary", "sh-failing", "sh-huge", "sh-periodic", "sh-param"} {
		if _, _, err := c.Jobs().Deregister(id, true, nil); err != nil {
			t.Fatalf("deregister %s: %v", id, err)
		}
	}

	// ACL tokens with an expiry, on an agent with ACLs enabled.
	aclTokensWithExpiry(t)

	if problems := shapes.report(); len(problems) > 0 {
		t.Errorf("%d problems in answers decoded into Nomad's api structs:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}

func aclTokensWithExpiry(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "acl.hcl")
	if err := os.WriteFile(cfg, []byte("acl {\n  enabled = true\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr, stop, err := startAgent(root, "-server", "-config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ac, err := api.NewClient(&api.Config{Address: addr, HttpClient: newShapeClient()})
	if err != nil {
		t.Fatal(err)
	}
	boot, _, err := ac.ACLTokens().Bootstrap(nil)
	if err != nil {
		t.Fatalf("bootstrap: %v", err)
	}
	ac.SetSecretID(boot.SecretID)
	if _, err := ac.ACLPolicies().Upsert(&api.ACLPolicy{Name: "readonly", Rules: `namespace "default" { policy = "read" }`}, nil); err != nil {
		t.Fatalf("policy: %v", err)
	}
	tok, _, err := ac.ACLTokens().Create(&api.ACLToken{Name: "expiring", Type: "client", Policies: []string{"readonly"}, ExpirationTTL: time.Hour}, nil)
	if err != nil {
		t.Fatalf("create token: %v", err)
	}
	if tok.ExpirationTime == nil || tok.ExpirationTime.Before(time.Now()) {
		t.Fatalf("token expiry: %+v", tok)
	}
	if _, _, err := ac.ACLTokens().List(nil); err != nil {
		t.Fatalf("list tokens: %v", err)
	}
	if _, _, err := ac.ACLTokens().Info(tok.AccessorID, nil); err != nil {
		t.Fatalf("token info: %v", err)
	}
	if _, _, err := ac.ACLTokens().Self(nil); err != nil {
		t.Fatalf("token self: %v", err)
	}
	if _, _, err := ac.ACLPolicies().List(nil); err != nil {
		t.Fatalf("policies: %v", err)
	}
}

func registerHCL(t *testing.T, c *api.Client, hcl string) {
	t.Helper()
	job, err := c.Jobs().ParseHCL(hcl, true)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, hcl)
	}
	if _, _, err := c.Jobs().Register(job, nil); err != nil {
		t.Fatalf("register %s: %v", *job.ID, err)
	}
}

// canaryHCL is a one-allocation service job with one canary per new version, healthy once its
// task has run for a second.
func canaryHCL(id, env, sleep string) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  update {
    canary           = 1
    max_parallel     = 1
    health_check     = "task_states"
    min_healthy_time = "1s"
    healthy_deadline = "1m"
    progress_deadline = "2m"
  }
  group "g" {
    task "t" {
      driver = "raw_exec"
      env {
        V = %q
      }
      config {
        command = "/bin/sleep"
        args    = [%q]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, id, env, sleep)
}

// failingHCL is a batch job whose task exits 1 at once: no restart, one reschedule after 1s.
func failingHCL(id string) string {
	return fmt.Sprintf(`
job %q {
  datacenters = ["dc1"]
  type = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 1
      interval  = "1h"
      delay     = "1s"
      unlimited = false
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "exit 1"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`, id)
}

func latestDeployment(t *testing.T, c *api.Client, job string, version uint64, status string) bool {
	t.Helper()
	d, _, err := c.Jobs().LatestDeployment(job, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d != nil && d.JobVersion == version && d.Status == status
}

func canaryHealthy(t *testing.T, c *api.Client, job string, version uint64) bool {
	t.Helper()
	stubs, _, err := c.Jobs().Allocations(job, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range stubs {
		if s.JobVersion == version && s.DeploymentStatus != nil && s.DeploymentStatus.Canary && s.DeploymentStatus.Healthy != nil && *s.DeploymentStatus.Healthy {
			return true
		}
	}
	return false
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
