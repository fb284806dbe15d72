package main

// Linux system call numbers (x86-64) the helper calls directly: each acts on the calling thread
// only, which the syscall package's wrappers (applied to every thread) do not allow.
const (
	sysSetns     = 308
	sysSeccomp   = 317
	sysPrlimit64 = 302
	sysCapset    = 126
	sysUnshare   = 272
	sysSetresuid = 117
	sysSetresgid = 119
	sysSetgroups = 116
	sysPrctl     = 157
	sysChroot    = 161
	sysFchdir    = 81
)
