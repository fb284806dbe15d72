/**
 * The exec sandbox's seccomp filter, decoded from the bytes bubblewrap gets and run through a
 * classic-BPF interpreter written here (the kernel's semantics for the five instructions the
 * assembler can emit): every refused syscall of every architecture answers EPERM, namespaces
 * in clone/unshare are refused while threads and plain forks pass, clone3 answers ENOSYS,
 * foreign ABIs are killed, and the rest is allowed. Plus the assembler's own rules.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BPF_INSTRUCTION_BYTES,
  BpfAssemblyError,
  BpfOp,
  BpfProgramBuilder,
  decodeBpf,
  type BpfInstruction,
} from '../../src/drivers/exec/seccomp/bpf-program.js';
import {
  CloneFlag,
  REFUSED_SYSCALLS,
  SeccompRet,
  defaultSeccompProgram,
} from '../../src/drivers/exec/seccomp/default-seccomp-filter.js';
import { AuditArch, SYSCALL_TABLES, X86_64_SYSCALLS, type SyscallTable } from '../../src/drivers/exec/seccomp/syscall-tables.js';

const EPERM = SeccompRet.Errno | 1;
const ENOSYS = SeccompRet.Errno | 38;
const SIGCHLD = 17;
/** What glibc's pthread_create passes to clone. */
const THREAD_FLAGS = 0x003d0f00;

/** Runs a decoded seccomp program on one syscall, as the kernel does; returns the verdict. */
function run(program: readonly BpfInstruction[], arch: number, nr: number, args: number[] = []): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr, 0);
  data.writeUInt32LE(arch >>> 0, 4);
  args.forEach((a, i) => data.writeUInt32LE(a >>> 0, 16 + 8 * i));
  let acc = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const ins = program[pc]!;
    switch (ins.code) {
      case BpfOp.LoadAbsWord:
        assert.ok(ins.k % 4 === 0 && ins.k < 64, `aligned load inside seccomp_data at ${pc}`);
        acc = data.readUInt32LE(ins.k);
        break;
      case BpfOp.JumpEq:
        pc += acc === ins.k ? ins.jt : ins.jf;
        break;
      case BpfOp.JumpGe:
        pc += acc >= ins.k ? ins.jt : ins.jf;
        break;
      case BpfOp.JumpSet:
        pc += (acc & ins.k) >>> 0 !== 0 ? ins.jt : ins.jf;
        break;
      case BpfOp.Return:
        return ins.k >>> 0;
      default:
        assert.fail(`unknown instruction 0x${ins.code.toString(16)} at ${pc}`);
    }
  }
  return assert.fail('the program ran off its end');
}

const taskFilter = decodeBpf(defaultSeccompProgram());
const execFilter = decodeBpf(defaultSeccompProgram({ allowSetns: true }));

function nr(t: SyscallTable, name: keyof SyscallTable['numbers']): number {
  const n = t.numbers[name];
  assert.ok(n !== undefined, `${t.name} has ${name}`);
  return n;
}

test('seccomp filter: a whole number of instructions, within the kernel limit, every jump inside the program', () => {
  const bytes = defaultSeccompProgram();
  assert.equal(bytes.length % BPF_INSTRUCTION_BYTES, 0);
  assert.ok(taskFilter.length > 100 && taskFilter.length <= 4096, `${taskFilter.length} instructions`);
  taskFilter.forEach((ins, pc) => {
    assert.ok((Object.values(BpfOp) as number[]).includes(ins.code), `known opcode at ${pc}`);
    if (ins.code !== BpfOp.Return && ins.code !== BpfOp.LoadAbsWord) assert.ok(pc + 1 + Math.max(ins.jt, ins.jf) < taskFilter.length);
  });
  assert.deepEqual(taskFilter[taskFilter.length - 1]!.code, BpfOp.Return, 'ends with a return');
  // The first instruction loads the architecture.
  assert.deepEqual(taskFilter[0], { code: BpfOp.LoadAbsWord, jt: 0, jf: 0, k: 4 });
});

test('seccomp filter: every refused syscall answers EPERM on every architecture that has it', () => {
  for (const t of SYSCALL_TABLES) {
    for (const group of REFUSED_SYSCALLS) {
      for (const name of group.names) {
        const n = t.numbers[name];
        if (n === undefined) continue;
        assert.equal(run(taskFilter, t.arch, n), EPERM, `${t.name} ${name} (${group.what})`);
      }
    }
  }
  // The ones Docker's default profile refuses and the issue names, spelled out on x86_64.
  for (const name of ['mount', 'umount2', 'pivot_root', 'kexec_load', 'kexec_file_load', 'init_module', 'finit_module', 'delete_module', 'bpf', 'perf_event_open', 'keyctl', 'add_key', 'request_key', 'ptrace', 'reboot', 'swapon', 'swapoff', 'acct', 'setns', 'open_by_handle_at', 'userfaultfd', 'iopl', 'ioperm', 'syslog', 'settimeofday', 'clock_settime'] as const) {
    assert.equal(run(taskFilter, AuditArch.X86_64, nr(X86_64_SYSCALLS, name)), EPERM, name);
  }
});

test('seccomp filter: ordinary syscalls are allowed', () => {
  // read, write, openat, execve, exit_group, chroot, socket; aarch64 read, execve; i386 read, execve.
  for (const n of [0, 1, 257, 59, 231, 161, 41]) assert.equal(run(taskFilter, AuditArch.X86_64, n), SeccompRet.Allow, `x86_64 ${n}`);
  for (const n of [63, 221]) assert.equal(run(taskFilter, AuditArch.AARCH64, n), SeccompRet.Allow, `aarch64 ${n}`);
  for (const n of [3, 11]) assert.equal(run(taskFilter, AuditArch.I386, n), SeccompRet.Allow, `i386 ${n}`);
});

test('seccomp filter: clone and unshare may not make namespaces; forks, threads and unshare(CLONE_FILES) pass', () => {
  for (const t of SYSCALL_TABLES) {
    const clone = nr(t, 'clone');
    const unshare = nr(t, 'unshare');
    assert.equal(run(taskFilter, t.arch, clone, [SIGCHLD]), SeccompRet.Allow, `${t.name} fork`);
    assert.equal(run(taskFilter, t.arch, clone, [THREAD_FLAGS]), SeccompRet.Allow, `${t.name} thread`);
    for (const [flag, value] of Object.entries(CloneFlag)) {
      if (flag === 'NEWTIME') continue; // part of the exit signal in clone's flags
      assert.equal(run(taskFilter, t.arch, clone, [value | SIGCHLD]), EPERM, `${t.name} clone CLONE_${flag}`);
    }
    for (const [flag, value] of Object.entries(CloneFlag)) assert.equal(run(taskFilter, t.arch, unshare, [value]), EPERM, `${t.name} unshare CLONE_${flag}`);
    assert.equal(run(taskFilter, t.arch, unshare, [0x00000400]), SeccompRet.Allow, `${t.name} unshare(CLONE_FILES)`);
    // clone3's flags are behind a pointer: ENOSYS makes libc fall back to clone, which is checked.
    assert.equal(run(taskFilter, t.arch, nr(t, 'clone3')), ENOSYS, `${t.name} clone3`);
  }
});

test('seccomp filter: other architectures and x86_64 x32 syscalls are killed', () => {
  assert.equal(run(taskFilter, 0x40000028 /* ARM (compat) */, 0), SeccompRet.KillProcess);
  assert.equal(run(taskFilter, 0xc00000f3 /* RISCV64 */, 63), SeccompRet.KillProcess);
  assert.equal(run(taskFilter, AuditArch.X86_64, 0x40000000 | 0), SeccompRet.KillProcess, 'x32 read');
  assert.equal(run(taskFilter, AuditArch.X86_64, 0x40000000 | 165), SeccompRet.KillProcess, 'x32 mount');
});

test('seccomp filter: the exec-session variant lets setns through, and only that', () => {
  for (const t of SYSCALL_TABLES) {
    assert.equal(run(execFilter, t.arch, nr(t, 'setns')), SeccompRet.Allow, `${t.name} setns`);
    assert.equal(run(taskFilter, t.arch, nr(t, 'setns')), EPERM, `${t.name} setns in tasks`);
    for (const n of [nr(t, 'mount'), nr(t, 'keyctl'), nr(t, 'ptrace')]) assert.equal(run(execFilter, t.arch, n), EPERM);
    assert.equal(run(execFilter, t.arch, nr(t, 'unshare'), [CloneFlag.NEWUSER]), EPERM);
  }
});

test('bpf assembler: labels resolve to forward offsets; backward, too-far and unknown jumps are refused', () => {
  const ok = new BpfProgramBuilder().load(0).jumpEq(5, 'yes', 'no').label('no').ret(0).label('yes').ret(1).instructions();
  assert.deepEqual(ok[1], { code: BpfOp.JumpEq, jt: 1, jf: 0, k: 5 });
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof BpfAssemblyError);
      return err.code;
    }
    return assert.fail('expected an assembly error');
  };
  assert.equal(code(() => new BpfProgramBuilder().jumpEq(1, 'nowhere').ret(0).instructions()), 'BPF_UNKNOWN_LABEL');
  assert.equal(code(() => new BpfProgramBuilder().label('a').ret(0).label('a')), 'BPF_DUPLICATE_LABEL');
  assert.equal(code(() => new BpfProgramBuilder().label('back').load(0).jumpEq(1, 'back').ret(0).instructions()), 'BPF_JUMP_TOO_FAR');
  const far = new BpfProgramBuilder().load(0).jumpEq(1, 'end');
  for (let i = 0; i < 256; i++) far.ret(0);
  assert.equal(code(() => far.label('end').ret(1).instructions()), 'BPF_JUMP_TOO_FAR');
  const long = new BpfProgramBuilder();
  for (let i = 0; i < 4097; i++) long.ret(0);
  assert.equal(code(() => long.instructions()), 'BPF_TOO_LONG');
  // Serialized and decoded back unchanged (host byte order, 8 bytes each).
  const bytes = new BpfProgramBuilder().load(4).jumpEq(0xc000003e, 'x').ret(0x80000000).label('x').ret(0x7fff0000).assemble();
  assert.equal(bytes.length, 4 * BPF_INSTRUCTION_BYTES);
  assert.deepEqual(decodeBpf(bytes)[1], { code: BpfOp.JumpEq, jt: 1, jf: 0, k: 0xc000003e });
  assert.equal(decodeBpf(bytes)[3]!.k, 0x7fff0000);
});
