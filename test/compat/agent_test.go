// Package compat drives a real Caravan agent with Nomad's official Go API client
// (github.com/hashicorp/nomad/api, an ordinary module dependency): what Nomad's own tools
// send must decode, and what Caravan answers must decode in them.
package compat

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

var client *api.Client

// devClient talks to a second agent, `caravan agent -dev` (server and client in one), for the
// routes answered by a client: host stats, allocation GC, node metadata, checks.
var devClient *api.Client

// TestMain starts one `caravan agent -server` and one `caravan agent -dev` on free loopback
// ports for the whole suite and stops them (by their pids) at the end.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	addr, stop, err := startAgent(root, "-server")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stop()
	// The -dev agent's bridge-mode allocations go on a bridge of the suite's own (network_test.go).
	netConfig, removeBridge, err := compatBridgeConfig()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer removeBridge()
	devAddr, stopDev, err := startAgent(root, "-dev", "-config", netConfig)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer stopDev()
	if client, err = api.NewClient(&api.Config{Address: addr, HttpClient: newShapeClient()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if devClient, err = api.NewClient(&api.Config{Address: devAddr, HttpClient: newShapeClient()}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if testing.Verbose() {
		fmt.Fprintf(os.Stderr, "api struct fields absent from every answer (review):\n  %s\n", strings.Join(shapes.absentReport(), "\n  "))
	}
	// Every answer of every test was decoded strictly into its api type (shape_recorder_test.go).
	if problems := shapes.report(); len(problems) > 0 {
		fmt.Fprintf(os.Stderr, "--- FAIL: %d problems in %d answers decoded into Nomad's api structs:\n", len(problems), shapes.checked)
		for _, p := range problems {
			fmt.Fprintln(os.Stderr, "    "+p)
		}
		return 1
	}
	return code
}

// startAgent starts `caravan agent <role> [extra…]` in a temporary data dir and waits until it is
// healthy; stop interrupts it (SIGKILL after 10 s), waits, and removes the data dir.
func startAgent(root, role string, extra ...string) (string, func(), error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dataDir, err := os.MkdirTemp("", "caravan-compat-")
	if err != nil {
		return "", nil, err
	}
	args := append([]string{filepath.Join(root, "bin/caravan.js"), "agent", role, "-bind", "127.0.0.1",
		"-http-port", fmt.Sprint(port), "-data-dir", dataDir}, extra...)
	cmd := exec.Command("node", args...)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dataDir)
		return "", nil, fmt.Errorf("starting the agent: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _, _ = cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		os.RemoveAll(dataDir)
	}
	addr := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(addr + "/v1/agent/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return addr, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("the %s agent did not become healthy: %v", role, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
