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
	"testing"
	"time"

	"github.com/hashicorp/nomad/api"
)

var client *api.Client

// TestMain starts one `caravan agent -server` on a free loopback port for the whole suite and
// stops it (by its pid) at the end.
func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	dataDir, err := os.MkdirTemp("", "caravan-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dataDir)
	cmd := exec.Command("node", filepath.Join(root, "bin/caravan.js"), "agent", "-server", "-bind", "127.0.0.1",
		"-http-port", fmt.Sprint(port), "-data-dir", dataDir)
	cmd.Dir = root
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "starting the agent:", err)
		return 1
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _, _ = cmd.Process.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	addr := fmt.Sprintf("http://127.0.0.1:%d", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(addr + "/v1/agent/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			fmt.Fprintln(os.Stderr, "the agent did not become healthy:", err)
			return 1
		}
		time.Sleep(100 * time.Millisecond)
	}
	client, err = api.NewClient(&api.Config{Address: addr})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
