// caravan-docker-exec: the docker driver's fast path for alloc exec into a runc container.
//
// The Engine's exec (dockerd → containerd → shim → runc exec, two Go runtimes starting) costs
// ~40 ms; entering the container directly costs ~3 ms. Docker's confinement of an exec is the
// container's namespaces, cgroups and root, the user, capabilities, no_new_privs, rlimits and the
// seccomp filter of the container's process spec. System tools cannot apply all of them in the
// order required (setns and chroot need CAP_SYS_ADMIN/CAP_SYS_CHROOT, which the capability drop
// removes; the seccomp filter must come after both, and a tool exec'd after entering the mount
// namespace would be loaded from the container's files while still privileged), so this one
// small program does it, on one locked OS thread, before forking the command:
//
//	prepare <pid> <containerId>   prints the exec spec of the container (JSON): env, cwd and
//	                              oom_score_adj from the runtime's bundle config.json; the user,
//	                              capabilities, no_new_privs and seccomp filters (copied with
//	                              PTRACE_SECCOMP_GET_FILTER) of a reference process `runc exec`
//	                              starts in the container — this binary, run as `reference`; exit 3
//	                              with a reason when the container cannot be entered this way (the
//	                              caller falls back to the Engine's exec).
//	exec                          runs the command of the spec in $CARAVAN_DOCKER_EXEC, with the
//	                              inherited stdin/stdout/stderr (pipes or a terminal), and exits
//	                              with its exit code (128+signal when killed by a signal).
//
// Anything unexpected makes it refuse rather than run a command less confined than Docker would.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
)

func init() {
	// Every privileged step acts on this thread only; the command is forked from it.
	runtime.LockOSThread()
}

// Exit codes: exitCannotRun for a command that is missing or cannot be executed (Docker's exec
// reports 126 for those); exitSetupFailed when the container could not be entered (the driver's
// Engine path reports 127 when the Engine fails); exitIneligible from prepare tells the driver
// to use the Engine's exec instead.
const (
	exitCannotRun   = 126
	exitSetupFailed = 127
	exitIneligible  = 3
)

func main() {
	if len(os.Args) >= 4 && os.Args[1] == "prepare" {
		spec, err := prepare(os.Args[2], os.Args[3])
		if err != nil {
			fmt.Fprintf(os.Stderr, "%v\n", err)
			os.Exit(exitIneligible)
		}
		_ = json.NewEncoder(os.Stdout).Encode(spec)
		return
	}
	if len(os.Args) == 2 && os.Args[1] == "reference" {
		waitAsReference()
	}
	if len(os.Args) == 2 && os.Args[1] == "exec" {
		var spec ExecSpec
		if err := json.Unmarshal([]byte(os.Getenv("CARAVAN_DOCKER_EXEC")), &spec); err != nil {
			fmt.Fprintf(os.Stderr, "caravan-docker-exec: bad spec: %v\n", err)
			os.Exit(exitSetupFailed)
		}
		os.Exit(run(&spec))
	}
	fmt.Fprintln(os.Stderr, "usage: caravan-docker-exec prepare <pid> <containerId> | exec (spec in $CARAVAN_DOCKER_EXEC)")
	os.Exit(2)
}
