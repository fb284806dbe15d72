package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

// Caps are the capability sets of the container's process spec, by name (CAP_CHOWN, …).
type Caps struct {
	Bounding    []string `json:"bounding"`
	Effective   []string `json:"effective"`
	Permitted   []string `json:"permitted"`
	Inheritable []string `json:"inheritable"`
	Ambient     []string `json:"ambient"`
}

// ExecSpec is what `prepare` prints and `exec` reads (with args and tty added by the driver).
type ExecSpec struct {
	Pid         int      `json:"pid"`
	StartTime   string   `json:"startTime"`
	ContainerID string   `json:"containerId"`
	UID         uint32   `json:"uid"`
	GID         uint32   `json:"gid"`
	Groups      []uint32 `json:"groups"`
	Caps        Caps     `json:"caps"`
	NoNewPrivs  bool     `json:"noNewPrivs"`
	OomScoreAdj *int     `json:"oomScoreAdj,omitempty"`
	Env         []string `json:"env"`
	Cwd         string   `json:"cwd"`
	// Filters are the container's seccomp programs (struct sock_filter arrays, base64), oldest first.
	Filters []string `json:"filters"`
	Args    []string `json:"args,omitempty"`
	// Tty is whether stdin is a terminal (found out by `exec`, not passed in).
	Tty bool `json:"-"`
}

// bundleConfig is the part of the OCI runtime spec (the bundle's config.json) used here.
type bundleConfig struct {
	Process *struct {
		User struct {
			UID            uint32   `json:"uid"`
			GID            uint32   `json:"gid"`
			AdditionalGids []uint32 `json:"additionalGids"`
		} `json:"user"`
		Env             []string `json:"env"`
		Cwd             string   `json:"cwd"`
		Capabilities    *Caps    `json:"capabilities"`
		NoNewPrivileges bool     `json:"noNewPrivileges"`
		OomScoreAdj     *int     `json:"oomScoreAdj"`
		ApparmorProfile string   `json:"apparmorProfile"`
		SelinuxLabel    string   `json:"selinuxLabel"`
	} `json:"process"`
	Linux *struct {
		Namespaces []struct {
			Type string `json:"type"`
		} `json:"namespaces"`
	} `json:"linux"`
}

// procStat returns the start time (field 22) and parent pid (field 4) of a process.
func procStat(dir string) (startTime string, ppid int, err error) {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return "", 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "", 0, fmt.Errorf("unreadable %s/stat", dir)
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "", 0, fmt.Errorf("short %s/stat", dir)
	}
	ppid, _ = strconv.Atoi(f[1])
	return f[19], ppid, nil
}

// sameNamespace tells whether two processes share a namespace of kind ns (user, cgroup, …).
func sameNamespace(a, b, ns string) (bool, error) {
	la, err := os.Readlink(filepath.Join(a, "ns", ns))
	if err != nil {
		return false, err
	}
	lb, err := os.Readlink(filepath.Join(b, "ns", ns))
	if err != nil {
		return false, err
	}
	return la == lb, nil
}

// prepare builds the exec spec of the runc container whose init is pid, or says why it cannot.
func prepare(pidArg, containerID string) (*ExecSpec, error) {
	pid, err := strconv.Atoi(pidArg)
	if err != nil || pid <= 1 {
		return nil, fmt.Errorf("bad pid %q", pidArg)
	}
	if len(containerID) != 64 || strings.Trim(containerID, "0123456789abcdef") != "" {
		return nil, fmt.Errorf("bad container id %q", containerID)
	}
	dir := fmt.Sprintf("/proc/%d", pid)
	startTime, ppid, err := procStat(dir)
	if err != nil {
		return nil, err
	}
	// The init's parent is the runc shim, running in the bundle directory, started for this id.
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", ppid))
	if err != nil {
		return nil, err
	}
	args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
	if len(args) == 0 || !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim-runc-") || !hasFlag(args, "-id", containerID) {
		return nil, fmt.Errorf("the parent of pid %d is not the runc shim of container %s", pid, containerID[:12])
	}
	bundle, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", ppid))
	if err != nil {
		return nil, err
	}
	if filepath.Base(bundle) != containerID {
		return nil, fmt.Errorf("unexpected bundle directory %s", bundle)
	}
	// The runtime the shim runs (Docker's runc unless configured otherwise) and its state root.
	opts := struct {
		BinaryName string `json:"binary_name"`
		Root       string `json:"root"`
	}{BinaryName: "runc", Root: "/run/containerd/runc"}
	if b, err := os.ReadFile(filepath.Join(bundle, "options.json")); err == nil {
		if err := json.Unmarshal(b, &opts); err != nil {
			return nil, fmt.Errorf("options.json: %v", err)
		}
	}
	if filepath.Base(opts.BinaryName) != "runc" {
		return nil, fmt.Errorf("runtime %s is not runc", opts.BinaryName)
	}
	namespace := flagValue(args, "-namespace")
	if namespace == "" || strings.ContainsAny(namespace, "/.") {
		return nil, fmt.Errorf("the shim names no containerd namespace")
	}
	runcRoot := filepath.Join(opts.Root, namespace)
	if _, err := os.Stat(filepath.Join(runcRoot, containerID, "state.json")); err != nil {
		return nil, fmt.Errorf("no runc state for the container: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(bundle, "config.json"))
	if err != nil {
		return nil, err
	}
	var cfg bundleConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, fmt.Errorf("config.json: %v", err)
	}
	p := cfg.Process
	if p == nil || p.Capabilities == nil {
		return nil, fmt.Errorf("config.json has no process capabilities")
	}
	if p.ApparmorProfile != "" || p.SelinuxLabel != "" {
		return nil, fmt.Errorf("the container has an LSM label (AppArmor/SELinux), which this path does not apply")
	}
	if label, err := os.ReadFile(filepath.Join(dir, "attr", "current")); err == nil {
		l := strings.TrimSpace(strings.TrimRight(string(label), "\x00"))
		if l != "" && l != "unconfined" {
			return nil, fmt.Errorf("the container runs under LSM label %q", l)
		}
	}
	if cfg.Linux != nil {
		for _, ns := range cfg.Linux.Namespaces {
			if ns.Type == "user" {
				return nil, fmt.Errorf("the container has its own user namespace")
			}
		}
	}
	if same, err := sameNamespace(dir, "/proc/self", "user"); err != nil || !same {
		return nil, fmt.Errorf("the container is in another user namespace")
	}
	if same, err := sameNamespace(dir, "/proc/self", "mnt"); err != nil || same {
		return nil, fmt.Errorf("pid %d shares the host's mount namespace", pid)
	}
	// What runc gives an exec: the user, capabilities, no_new_privs and seccomp filter taken
	// from a reference process it starts (the Docker exec minus dockerd and containerd).
	ref, err := runcReference(opts.BinaryName, runcRoot, containerID)
	if err != nil {
		return nil, err
	}
	if ref.uid != p.User.UID || ref.gid != p.User.GID {
		return nil, fmt.Errorf("runc ran the reference as %d:%d, the spec says %d:%d", ref.uid, ref.gid, p.User.UID, p.User.GID)
	}
	// Still the same process after all this (not a pid reused meanwhile).
	if again, _, err := procStat(dir); err != nil || again != startTime {
		return nil, fmt.Errorf("pid %d exited", pid)
	}
	cwd := p.Cwd
	if cwd == "" {
		cwd = "/"
	}
	return &ExecSpec{
		Pid: pid, StartTime: startTime, ContainerID: containerID,
		UID: ref.uid, GID: ref.gid, Groups: ref.groups,
		Caps: ref.caps, NoNewPrivs: ref.noNewPrivs, OomScoreAdj: p.OomScoreAdj,
		Env: p.Env, Cwd: cwd, Filters: ref.filters,
	}, nil
}

func flagValue(args []string, flag string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			return args[i+1]
		}
	}
	return ""
}

func hasFlag(args []string, flag, value string) bool {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag && args[i+1] == value {
			return true
		}
	}
	return false
}

func statusField(dir, name string) string {
	b, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

const (
	ptraceSeize            = 0x4206
	ptraceInterrupt        = 0x4207
	ptraceSeccompGetFilter = 0x420c
	ptraceDetach           = 17
	sockFilterSize         = 8
)

func ptrace(req, pid int, addr, data uintptr) (uintptr, syscall.Errno) {
	r, _, e := syscall.Syscall6(syscall.SYS_PTRACE, uintptr(req), uintptr(pid), addr, data, 0, 0)
	return r, e
}

// seccompFilters copies the seccomp programs of pid (a process of our own: it is stopped for a
// moment), oldest first.
func seccompFilters(pid int) ([]string, error) {
	if e := errnoOf(ptrace(ptraceSeize, pid, 0, 0)); e != 0 {
		return nil, fmt.Errorf("ptrace seize of pid %d: %v", pid, e)
	}
	defer ptrace(ptraceDetach, pid, 0, 0)
	if e := errnoOf(ptrace(ptraceInterrupt, pid, 0, 0)); e != 0 {
		return nil, fmt.Errorf("ptrace interrupt: %v", e)
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, syscall.WALL, nil); err != nil {
		return nil, fmt.Errorf("waiting for pid %d to stop: %v", pid, err)
	}
	var newestFirst []string
	for i := 0; ; i++ {
		n, e := ptrace(ptraceSeccompGetFilter, pid, uintptr(i), 0)
		if e == syscall.ENOENT {
			break
		}
		if e == syscall.EINVAL && i == 0 {
			break // no filter at all
		}
		if e != 0 {
			return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER: %v", e)
		}
		buf := make([]byte, int(n)*sockFilterSize)
		if _, e := ptrace(ptraceSeccompGetFilter, pid, uintptr(i), uintptr(unsafe.Pointer(&buf[0]))); e != 0 {
			return nil, fmt.Errorf("PTRACE_SECCOMP_GET_FILTER: %v", e)
		}
		newestFirst = append(newestFirst, base64.StdEncoding.EncodeToString(buf))
	}
	out := make([]string, len(newestFirst))
	for i, f := range newestFirst {
		out[len(newestFirst)-1-i] = f
	}
	return out, nil
}

func errnoOf(_ uintptr, e syscall.Errno) syscall.Errno { return e }
