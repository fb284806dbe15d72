package main

// Linux system call numbers (arm64); see sys_amd64.go.
const (
	sysSetns     = 268
	sysSeccomp   = 277
	sysPrlimit64 = 261
	sysCapset    = 91
	sysUnshare   = 97
	sysSetresuid = 147
	sysSetresgid = 149
	sysSetgroups = 159
	sysPrctl     = 167
	sysChroot    = 51
	sysFchdir    = 50
)
