package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// reference is what runc gives a process exec'd into the container: its credentials, capability
// sets and no_new_privs (from /proc/PID/status) and its seccomp programs.
type reference struct {
	uid, gid    uint32
	groups      []uint32
	caps        Caps
	noNewPrivs  bool
	filters     []string
	seccompMode string
}

// runcReference runs this very binary in the container with `runc exec` (the exec Docker does,
// minus dockerd and containerd) as a reference process that only waits, reads what runc applied
// to it, and kills it. The container's own processes are never stopped or traced: stopping one
// can cut a system call of the workload short (a read returns fewer bytes).
func runcReference(runcBin, runcRoot, containerID string) (*reference, error) {
	self, err := os.Open("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	defer self.Close()
	tmp, err := os.MkdirTemp("", "caravan-docker-exec-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	pidFile := filepath.Join(tmp, "pid")
	// fd 3 in the container is this binary, opened on the host: it runs from there, nothing of
	// the container's is loaded, and it is confined by runc before it starts.
	cmd := exec.Command(runcBin, "--root", runcRoot, "exec", "--preserve-fds", "1", "--pid-file", pidFile, containerID, "/proc/self/fd/3", "reference")
	cmd.ExtraFiles = []*os.File{self}
	cmd.Env = []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("runc exec: %v", err)
	}
	// runc is the reference's parent and reaps it: it is left to exit by itself once the
	// reference was killed (killed first, the reference would stay a zombie of the container's
	// init, which need not reap).
	referencePid := 0
	defer func() {
		if referencePid > 0 {
			_ = syscall.Kill(referencePid, syscall.SIGKILL)
		}
		done := make(chan struct{})
		go func() {
			_ = cmd.Wait()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	ready := make(chan error, 1)
	go func() {
		line, err := bufio.NewReader(out).ReadString('\n')
		if err == nil && line != "ready\n" {
			err = fmt.Errorf("unexpected %q", line)
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, fmt.Errorf("runc exec of the reference process: %v %s", err, strings.TrimSpace(stderr.String()))
		}
	case <-time.After(10 * time.Second):
		for _, c := range childrenOf(cmd.Process.Pid) {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		return nil, fmt.Errorf("runc exec of the reference process timed out %s", strings.TrimSpace(stderr.String()))
	}
	// runc writes the pid file once its own start finished, a moment after the process runs.
	pid := 0
	for deadline := time.Now().Add(5 * time.Second); pid == 0 && time.Now().Before(deadline); {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil || pid <= 1 {
				return nil, fmt.Errorf("bad pid file %q", b)
			}
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if pid == 0 {
		for _, c := range childrenOf(cmd.Process.Pid) {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		return nil, fmt.Errorf("runc wrote no pid file")
	}
	referencePid = pid
	dir := fmt.Sprintf("/proc/%d", pid)
	ref := &reference{seccompMode: statusField(dir, "Seccomp"), noNewPrivs: statusField(dir, "NoNewPrivs") == "1"}
	ids := func(field string) ([]uint32, error) {
		var out []uint32
		for _, f := range strings.Fields(statusField(dir, field)) {
			n, err := strconv.ParseUint(f, 10, 32)
			if err != nil {
				return nil, fmt.Errorf("bad %s in status", field)
			}
			out = append(out, uint32(n))
		}
		return out, nil
	}
	uids, err := ids("Uid")
	if err != nil || len(uids) != 4 || uids[0] != uids[1] || uids[0] != uids[2] {
		return nil, fmt.Errorf("unexpected uids %v of the reference process", uids)
	}
	gids, err := ids("Gid")
	if err != nil || len(gids) != 4 || gids[0] != gids[1] || gids[0] != gids[2] {
		return nil, fmt.Errorf("unexpected gids %v of the reference process", gids)
	}
	if ref.groups, err = ids("Groups"); err != nil {
		return nil, err
	}
	ref.uid, ref.gid = uids[0], gids[0]
	for _, c := range []struct {
		field string
		set   *[]string
	}{{"CapBnd", &ref.caps.Bounding}, {"CapEff", &ref.caps.Effective}, {"CapPrm", &ref.caps.Permitted}, {"CapInh", &ref.caps.Inheritable}, {"CapAmb", &ref.caps.Ambient}} {
		mask, err := strconv.ParseUint(statusField(dir, c.field), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("bad %s in status", c.field)
		}
		*c.set = capNames(mask)
		if m, err := capMask(*c.set); err != nil || m != mask {
			return nil, fmt.Errorf("capability %s %x has bits this helper does not know", c.field, mask)
		}
	}
	if ref.filters, err = seccompFilters(pid); err != nil {
		return nil, err
	}
	if want := statusField(dir, "Seccomp_filters"); want != "" && want != strconv.Itoa(len(ref.filters)) {
		return nil, fmt.Errorf("copied %d seccomp filters, runc installed %s", len(ref.filters), want)
	}
	if ref.seccompMode != "0" && len(ref.filters) == 0 {
		return nil, fmt.Errorf("seccomp mode %q without a filter to copy", ref.seccompMode)
	}
	return ref, nil
}

// waitAsReference is the reference process's side: say it runs, then wait to be killed.
func waitAsReference() {
	fmt.Println("ready")
	for {
		time.Sleep(time.Hour)
	}
}

// childrenOf lists the children of pid (to clean up after a runc that did not say).
func childrenOf(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	for _, t := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/children", pid, t.Name()))
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

func capNames(mask uint64) []string {
	out := []string{}
	for name, n := range capNumbers {
		if mask&(1<<n) != 0 {
			out = append(out, name)
		}
	}
	return out
}
