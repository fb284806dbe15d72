package compat

import (
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// A job with a native (provider "nomad") group service and a tcp check on the -dev agent: its
// registration, the catalogue, the job's and the allocation's services and the check results
// decode strictly in Nomad's Go client.
func TestNativeServiceRegistrations(t *testing.T) {
	job, err := devClient.Jobs().ParseHCL(`
job "cs-web" {
  datacenters = ["dc1"]
  group "g" {
    network {
      port "http" {}
    }
    service {
      name     = "cs-web"
      provider = "nomad"
      port     = "http"
      tags     = ["compat"]
      check {
        type     = "tcp"
        interval = "1s"
        timeout  = "1s"
      }
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["60"]
      }
    }
  }
}`, true)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := devClient.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _, _ = devClient.Jobs().Deregister("cs-web", true, nil) }()
	var regs []*api.ServiceRegistration
	deadline := time.Now().Add(30 * time.Second)
	for len(regs) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no registration of cs-web")
		}
		time.Sleep(100 * time.Millisecond)
		if regs, _, err = devClient.Services().Get("cs-web", nil); err != nil {
			t.Fatal(err)
		}
	}
	r := regs[0]
	if r.ServiceName != "cs-web" || r.JobID != "cs-web" || r.Namespace != "default" || r.Port == 0 || r.Address == "" || len(r.Tags) != 1 || !strings.HasPrefix(r.ID, "_nomad-task-"+r.AllocID) {
		t.Fatalf("registration: %+v", r)
	}
	list, _, err := devClient.Services().List(nil)
	if err != nil || len(list) != 1 || list[0].Namespace != "default" || len(list[0].Services) != 1 || list[0].Services[0].ServiceName != "cs-web" {
		t.Fatalf("services: %+v %v", list, err)
	}
	byJob, _, err := devClient.Jobs().Services("cs-web", nil)
	if err != nil || len(byJob) != 1 || byJob[0].ID != r.ID {
		t.Fatalf("job services: %+v %v", byJob, err)
	}
	alloc, _, err := devClient.Allocations().Info(r.AllocID, nil)
	if err != nil {
		t.Fatal(err)
	}
	byAlloc, _, err := devClient.Allocations().Services(alloc.ID, nil)
	if err != nil || len(byAlloc) != 1 {
		t.Fatalf("alloc services: %+v %v", byAlloc, err)
	}
	for time.Now().Before(deadline) {
		checks, err := devClient.Allocations().Checks(alloc.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(checks) == 1 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no check result")
}
