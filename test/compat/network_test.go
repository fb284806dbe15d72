package compat

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

// The suite's own bridge and subnet for bridge-mode allocations (never Nomad's default "nomad").
const (
	compatBridge = "cvcompat0"
	compatSubnet = "172.31.252.0/24"
)

// compatBridgeConfig writes the -dev agent's client block naming the suite's bridge and Debian's
// CNI plugin directory; the function it returns removes the bridge and its per-bridge rules.
func compatBridgeConfig() (string, func(), error) {
	dir, err := os.MkdirTemp("", "caravan-compat-net-")
	if err != nil {
		return "", nil, err
	}
	file := filepath.Join(dir, "network.hcl")
	body := fmt.Sprintf("client {\n  bridge_network_name   = %q\n  bridge_network_subnet = %q\n  cni_path              = \"/usr/lib/cni\"\n}\n", compatBridge, compatSubnet)
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		return "", nil, err
	}
	remove := func() {
		_ = exec.Command("iptables", "-w", "-D", "INPUT", "-i", compatBridge, "-d", "127.0.0.0/8", "-m", "conntrack", "!", "--ctstate", "RELATED,ESTABLISHED", "-j", "DROP").Run()
		_ = exec.Command("iptables", "-w", "-D", "NOMAD-ADMIN", "-o", compatBridge, "-d", compatSubnet, "-j", "ACCEPT").Run()
		_ = exec.Command("ip", "link", "delete", compatBridge).Run()
		os.RemoveAll(dir)
	}
	return file, remove, nil
}

// A Poseidon-style runner: a group network in bridge mode with a dynamic port whose `to` is
// the port inside the runner (8080), a server listening there; its allocation's ports are
// checked through the Go client and the server is reached through the mapped host port.
func TestBridgeRunnerWithMappedPort(t *testing.T) {
	if os.Getuid() != 0 {
		t.Fatal("bridge networking needs root (network namespaces, iptables)")
	}
	if _, err := os.Stat("/usr/lib/cni/bridge"); err != nil {
		t.Fatal("bridge networking needs the CNI plugins: apt-get install containernetworking-plugins")
	}
	id := "compat-bridge-runner"
	job := api.NewServiceJob(id, id, "global", 50)
	job.Datacenters = []string{"dc1"}
	group := api.NewTaskGroup("runner", 1)
	mode := "bridge"
	group.Networks = []*api.NetworkResource{{
		Mode:         mode,
		DynamicPorts: []api.Port{{Label: "port", To: 8080}},
	}}
	task := api.NewTask("runner", "raw_exec")
	task.Config = map[string]interface{}{
		"command": "/bin/sh",
		"args":    []string{"-c", "mkdir -p local/www && echo runner-ok > local/www/index.html && exec python3 -m http.server 8080 --bind 0.0.0.0 -d local/www"},
	}
	group.AddTask(task)
	job.AddTaskGroup(group)
	job.Meta = map[string]string{"used": "false"}
	if _, _, err := devClient.Jobs().Register(job, nil); err != nil {
		t.Fatal(err)
	}
	defer func() { _, _, _ = devClient.Jobs().Deregister(id, true, nil) }()

	var alloc *api.Allocation
	deadline := time.Now().Add(90 * time.Second)
	for alloc == nil && time.Now().Before(deadline) {
		stubs, _, err := devClient.Jobs().Allocations(id, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range stubs {
			if s.ClientStatus == "running" {
				if alloc, _, err = devClient.Allocations().Info(s.ID, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	if alloc == nil {
		t.Fatalf("job %s: no running allocation", id)
	}
	ports := alloc.AllocatedResources.Shared.Ports
	if len(ports) != 1 || ports[0].Label != "port" || ports[0].To != 8080 || ports[0].Value < 20000 || ports[0].Value > 32000 {
		t.Fatalf("allocated ports: %+v", ports)
	}
	nets := alloc.AllocatedResources.Shared.Networks
	if len(nets) != 1 || nets[0].Mode != "bridge" || len(nets[0].DynamicPorts) != 1 || nets[0].DynamicPorts[0].To != 8080 {
		t.Fatalf("allocated networks: %+v", nets)
	}
	if alloc.NetworkStatus == nil || !strings.HasPrefix(alloc.NetworkStatus.Address, "172.31.252.") || alloc.NetworkStatus.InterfaceName != "eth0" {
		t.Fatalf("network status: %+v", alloc.NetworkStatus)
	}
	url := fmt.Sprintf("http://127.0.0.1:%d/", ports[0].Value)
	var body string
	for time.Now().Before(deadline) {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = strings.TrimSpace(string(b))
			if resp.StatusCode == 200 && body == "runner-ok" {
				return
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("GET %s: %q", url, body)
}
