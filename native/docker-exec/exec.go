package main

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"unsafe"
)

const (
	cloneFS              = 0x200
	prSetKeepCaps        = 8
	prCapBsetDrop        = 24
	prSetNoNewPrivs      = 38
	prCapAmbient         = 47
	prCapAmbientRaise    = 2
	prCapAmbientClearAll = 4
	seccompSetModeFilter = 1
	linuxCapVersion3     = 0x20080522
)

func raw(trap uintptr, a1, a2, a3 uintptr) error {
	if _, _, e := syscall.RawSyscall(trap, a1, a2, a3); e != 0 {
		return e
	}
	return nil
}

// prlimit reads (old) or sets (new) resource limit r of pid (0: this process).
func prlimit(pid, r int, newLimit, old *[2]uint64) error {
	if _, _, e := syscall.RawSyscall6(sysPrlimit64, uintptr(pid), uintptr(r), uintptr(unsafe.Pointer(newLimit)), uintptr(unsafe.Pointer(old)), 0, 0); e != 0 {
		return e
	}
	return nil
}

// parseLimits reads /proc/PID/limits: one line per resource in RLIMIT_* order after a header,
// in fixed columns (name 25, soft 20, hard 20).
func parseLimits(lines []string) ([16][2]uint64, error) {
	var out [16][2]uint64
	if len(lines) < 17 {
		return out, fmt.Errorf("%d lines", len(lines))
	}
	for r := 0; r < 16; r++ {
		l := lines[r+1] + strings.Repeat(" ", 67) // readAt trimmed the padding
		if len(l) < 67 {
			return out, fmt.Errorf("bad line %q", l)
		}
		for i, col := range []string{l[26:46], l[47:67]} {
			v := strings.TrimSpace(col)
			if v == "unlimited" {
				out[r][i] = ^uint64(0)
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return out, fmt.Errorf("bad value %q", v)
			}
			out[r][i] = n
		}
	}
	return out, nil
}

// setLimit gives this process the container's limit; where raising the hard limit is not
// allowed (no CAP_SYS_RESOURCE), the lower of the two is kept — never more than the container.
func setLimit(r int, want [2]uint64) error {
	err := prlimit(0, r, &want, nil)
	if err != syscall.EPERM {
		return err
	}
	var cur [2]uint64
	if err := prlimit(0, r, nil, &cur); err != nil {
		return err
	}
	lim := [2]uint64{min(want[0], cur[1]), min(want[1], cur[1])}
	return prlimit(0, r, &lim, nil)
}

func prctl(op, arg uintptr) error { return raw(sysPrctl, op, arg, 0) }

// fail reports a setup failure on stderr the way Docker's exec does, and gives its exit code.
func fail(format string, a ...any) int {
	fmt.Fprintf(os.Stderr, "caravan-docker-exec: "+format+"\n", a...)
	return exitSetupFailed
}

// run enters the container of spec on this thread and runs its command; returns the exit code.
func run(spec *ExecSpec) int {
	if len(spec.Args) == 0 || spec.Pid <= 1 {
		return fail("no command")
	}
	var termios syscall.Termios
	_, _, e := syscall.Syscall(syscall.SYS_IOCTL, 0, syscall.TCGETS, uintptr(unsafe.Pointer(&termios)))
	spec.Tty = e == 0
	// A directory handle on the init pins the process: if it exited (and its pid was reused),
	// everything opened through it fails instead of naming another process.
	procDir := fmt.Sprintf("/proc/%d", spec.Pid)
	dirFd, err := syscall.Open(procDir, syscall.O_DIRECTORY|syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail("container process %d: %v", spec.Pid, err)
	}
	if st, _, err := procStat(procDir); err != nil || st != spec.StartTime {
		return fail("the container's process %d is gone", spec.Pid)
	}
	nsFds := map[string]int{}
	for _, ns := range []string{"ipc", "uts", "net", "pid", "cgroup", "mnt"} {
		fd, err := syscall.Openat(dirFd, "ns/"+ns, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != nil {
			return fail("namespace %s of the container: %v", ns, err)
		}
		nsFds[ns] = fd
	}
	rootFd, err := syscall.Openat(dirFd, "root", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return fail("root of the container: %v", err)
	}
	cgroupLines, err := readAt(dirFd, "cgroup")
	if err != nil {
		return fail("cgroups of the container: %v", err)
	}
	limitLines, err := readAt(dirFd, "limits")
	if err != nil {
		return fail("rlimits of the container: %v", err)
	}
	limits, err := parseLimits(limitLines)
	if err != nil {
		return fail("rlimits of the container: %v", err)
	}
	if st, _, err := procStat(procDir); err != nil || st != spec.StartTime {
		return fail("the container's process %d is gone", spec.Pid)
	}
	lastCap, err := lastCapability()
	if err != nil {
		return fail("%v", err)
	}
	bounding, err1 := capMask(spec.Caps.Bounding)
	effective, err2 := capMask(spec.Caps.Effective)
	permitted, err3 := capMask(spec.Caps.Permitted)
	inheritable, err4 := capMask(spec.Caps.Inheritable)
	ambient, err5 := capMask(spec.Caps.Ambient)
	for _, e := range []error{err1, err2, err3, err4, err5} {
		if e != nil {
			return fail("%v", e)
		}
	}
	filters := make([][]byte, 0, len(spec.Filters))
	for _, f := range spec.Filters {
		b, err := base64.StdEncoding.DecodeString(f)
		if err != nil || len(b) == 0 || len(b)%sockFilterSize != 0 || len(b)/sockFilterSize > 4096 {
			return fail("bad seccomp filter")
		}
		filters = append(filters, b)
	}

	// 1. Cgroups: this whole process moves into the container's, so the command is forked there.
	if err := joinCgroups(cgroupLines); err != nil {
		return fail("joining the container's cgroups: %v", err)
	}
	// 2. Resource limits and OOM score of the container (per process).
	for r := range limits {
		if err := setLimit(r, limits[r]); err != nil {
			return fail("setting rlimit %d: %v", r, err)
		}
	}
	if spec.OomScoreAdj != nil {
		if err := os.WriteFile("/proc/self/oom_score_adj", []byte(strconv.Itoa(*spec.OomScoreAdj)), 0); err != nil {
			return fail("oom_score_adj: %v", err)
		}
	}
	// 3. Namespaces (this thread's; the pid namespace applies to the children it forks). The
	// mount namespace needs a thread that shares no fs_struct with the runtime's other threads.
	if err := raw(sysUnshare, cloneFS, 0, 0); err != nil {
		return fail("unshare(CLONE_FS): %v", err)
	}
	for _, ns := range []string{"cgroup", "ipc", "uts", "net", "pid", "mnt"} {
		if err := raw(sysSetns, uintptr(nsFds[ns]), 0, 0); err != nil {
			return fail("entering the container's %s namespace: %v", ns, err)
		}
		syscall.Close(nsFds[ns])
	}
	// 4. The container's root, as its init sees it (not the mount namespace's root, in case).
	if err := raw(sysFchdir, uintptr(rootFd), 0, 0); err != nil {
		return fail("fchdir to the container's root: %v", err)
	}
	if err := syscall.Chroot("."); err != nil {
		return fail("chroot: %v", err)
	}
	if err := syscall.Chdir("/"); err != nil {
		return fail("chdir /: %v", err)
	}
	syscall.Close(rootFd)
	syscall.Close(dirFd)
	// 5. Without no_new_privs, installing a filter is privileged: do it now, as runc does.
	if !spec.NoNewPrivs {
		if err := installFilters(filters); err != nil {
			return fail("%v", err)
		}
	}
	// 6. Capabilities and user, in runc's order: bounding set, keep caps across the uid change,
	// user and groups, then the process's sets and ambient caps.
	for c := uint(0); c <= lastCap; c++ {
		if bounding&(1<<c) == 0 {
			if err := prctl(prCapBsetDrop, uintptr(c)); err != nil {
				return fail("dropping capability %d: %v", c, err)
			}
		}
	}
	if err := prctl(prSetKeepCaps, 1); err != nil {
		return fail("PR_SET_KEEPCAPS: %v", err)
	}
	if err := setUser(spec); err != nil {
		return fail("%v", err)
	}
	if err := prctl(prSetKeepCaps, 0); err != nil {
		return fail("PR_SET_KEEPCAPS: %v", err)
	}
	if err := capset(effective, permitted, inheritable); err != nil {
		return fail("capset: %v", err)
	}
	if err := raw(sysPrctl, prCapAmbient, prCapAmbientClearAll, 0); err != nil {
		return fail("clearing ambient capabilities: %v", err)
	}
	for c := uint(0); c <= lastCap; c++ {
		if ambient&(1<<c) != 0 {
			if err := raw(sysPrctl, prCapAmbient, prCapAmbientRaise, uintptr(c)); err != nil {
				return fail("ambient capability %d: %v", c, err)
			}
		}
	}
	if spec.NoNewPrivs {
		if err := prctl(prSetNoNewPrivs, 1); err != nil {
			return fail("no_new_privs: %v", err)
		}
		if err := installFilters(filters); err != nil {
			return fail("%v", err)
		}
	}
	// 7. The command, in the container, as the container's user.
	env := append([]string(nil), spec.Env...)
	if spec.Tty && !hasEnv(env, "TERM") {
		env = append(env, "TERM=xterm")
	}
	if !hasEnv(env, "HOME") {
		env = append(env, "HOME="+homeOf(spec.UID))
	}
	if err := syscall.Chdir(spec.Cwd); err != nil {
		return fail("chdir to %s: %v", spec.Cwd, err)
	}
	path, err := lookPath(spec.Args[0], env)
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec failed: unable to start container process: exec: %v\n", err)
		return exitCannotRun
	}
	return forkWait(path, spec, env)
}

func readAt(dirFd int, name string) ([]string, error) {
	fd, err := syscall.Openat(dirFd, name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			lines = append(lines, l)
		}
	}
	return lines, sc.Err()
}

func lastCapability() (uint, error) {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 || n > 63 {
		return 0, fmt.Errorf("bad cap_last_cap")
	}
	return uint(n), nil
}

// joinCgroups writes this process into every cgroup the container's init is in (v1 hierarchies
// and the v2 one); a hierarchy that cannot be found or joined is an error.
func joinCgroups(lines []string) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	pid := strconv.Itoa(os.Getpid())
	for _, l := range lines {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			return fmt.Errorf("bad cgroup line %q", l)
		}
		key := parts[1]
		if parts[0] == "0" && key == "" {
			key = "cgroup2"
		}
		m, ok := mounts[key]
		if !ok {
			return fmt.Errorf("hierarchy %q is not mounted", key)
		}
		rel := parts[2]
		if m.root != "/" {
			if rel != m.root && !strings.HasPrefix(rel, m.root+"/") {
				return fmt.Errorf("cgroup %s is outside the mounted part of %q", rel, key)
			}
			rel = strings.TrimPrefix(rel, m.root)
		}
		file := filepath.Join(m.point, filepath.Clean("/"+rel), "cgroup.procs")
		if err := os.WriteFile(file, []byte(pid), 0); err != nil {
			return fmt.Errorf("%s: %v", file, err)
		}
	}
	return nil
}

type cgroupMount struct{ root, point string }

// cgroupMounts maps each hierarchy (its controllers as /proc/PID/cgroup names them, e.g.
// "cpu,cpuacct" or "name=systemd"; "cgroup2" for v2) to where it is mounted.
func cgroupMounts() (map[string]cgroupMount, error) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	out := map[string]cgroupMount{}
	for _, line := range strings.Split(string(b), "\n") {
		pre, post, ok := strings.Cut(line, " - ")
		if !ok {
			continue
		}
		f := strings.Fields(pre)
		g := strings.Fields(post)
		if len(f) < 5 || len(g) < 3 {
			continue
		}
		m := cgroupMount{root: unescape(f[3]), point: unescape(f[4])}
		switch g[0] {
		case "cgroup2":
			if _, seen := out["cgroup2"]; !seen {
				out["cgroup2"] = m
			}
		case "cgroup":
			var ctrls []string
			for _, o := range strings.Split(g[2], ",") {
				if o == "rw" || o == "ro" || strings.HasPrefix(o, "release_agent") || o == "clone_children" || o == "noprefix" || o == "xattr" || o == "cpuset_v2_mode" || o == "nsdelegate" {
					continue
				}
				ctrls = append(ctrls, o)
			}
			// /proc/PID/cgroup lists a hierarchy's controllers in the kernel's order, the same
			// order as its mount options.
			key := strings.Join(ctrls, ",")
			if _, seen := out[key]; !seen {
				out[key] = m
			}
		}
	}
	return out, nil
}

func unescape(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}

type sockFprog struct {
	len    uint16
	_      [6]byte
	filter *byte
}

func installFilters(filters [][]byte) error {
	for _, f := range filters {
		prog := sockFprog{len: uint16(len(f) / sockFilterSize), filter: &f[0]}
		if err := raw(sysSeccomp, seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&prog))); err != nil {
			return fmt.Errorf("installing the container's seccomp filter: %v", err)
		}
	}
	return nil
}

func setUser(spec *ExecSpec) error {
	groups := spec.Groups
	var gp uintptr
	if len(groups) > 0 {
		gp = uintptr(unsafe.Pointer(&groups[0]))
	}
	if err := raw(sysSetgroups, uintptr(len(groups)), gp, 0); err != nil {
		return fmt.Errorf("setgroups: %v", err)
	}
	if err := raw(sysSetresgid, uintptr(spec.GID), uintptr(spec.GID), uintptr(spec.GID)); err != nil {
		return fmt.Errorf("setgid %d: %v", spec.GID, err)
	}
	if err := raw(sysSetresuid, uintptr(spec.UID), uintptr(spec.UID), uintptr(spec.UID)); err != nil {
		return fmt.Errorf("setuid %d: %v", spec.UID, err)
	}
	return nil
}

func capset(effective, permitted, inheritable uint64) error {
	hdr := struct {
		version uint32
		pid     int32
	}{linuxCapVersion3, 0}
	var data [2]struct{ effective, permitted, inheritable uint32 }
	for i := 0; i < 2; i++ {
		data[i].effective = uint32(effective >> (32 * i))
		data[i].permitted = uint32(permitted >> (32 * i))
		data[i].inheritable = uint32(inheritable >> (32 * i))
	}
	return raw(sysCapset, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
}

func hasEnv(env []string, name string) bool {
	for _, e := range env {
		if strings.HasPrefix(e, name+"=") {
			return true
		}
	}
	return false
}

// homeOf finds uid's home in the container's /etc/passwd (read as the container's user), as
// runc sets HOME; "/" when there is none.
func homeOf(uid uint32) string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		return "/"
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(line, ":")
		if len(f) >= 6 && f[2] == strconv.FormatUint(uint64(uid), 10) && f[5] != "" {
			return f[5]
		}
	}
	return "/"
}

// lookPath finds a command in the container's PATH, as runc does.
func lookPath(name string, env []string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path := "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			path = v
		}
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" {
			dir = "."
		}
		p := filepath.Join(dir, name)
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && syscall.Access(p, 1) == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("%q: executable file not found in $PATH", name)
}

// forkWait starts the command from this thread (so it inherits everything set above), passes on
// the signals the agent may send, and returns its exit code (128+signal when a signal killed it).
func forkWait(path string, spec *ExecSpec, env []string) int {
	sigs := make(chan os.Signal, 8)
	// Caught, not ignored: a caught signal is reset to its default in the command.
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	pid, err := syscall.ForkExec(path, spec.Args, &syscall.ProcAttr{
		Env:   env,
		Files: []uintptr{0, 1, 2},
		// No Pdeathsig: Go's fork checks getppid() against this pid, which a child in another
		// pid namespace never matches. The driver ends a session with SIGTERM instead (below).
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec failed: unable to start container process: exec: %q: %v\n", spec.Args[0], err)
		return exitCannotRun
	}
	go func() {
		for s := range sigs {
			switch {
			case s == syscall.SIGTERM:
				// The driver's "kill": the session ended.
				_ = syscall.Kill(pid, syscall.SIGKILL)
			case !spec.Tty || s == syscall.SIGHUP:
				// On a terminal the command got the keyboard's signals itself (same process group).
				_ = syscall.Kill(pid, s.(syscall.Signal))
			}
		}
	}()
	for {
		var ws syscall.WaitStatus
		_, err := syscall.Wait4(pid, &ws, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return fail("wait: %v", err)
		}
		if ws.Exited() {
			return ws.ExitStatus()
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
	}
}
