/**
 * A tiny assembler for the classic-BPF programs seccomp runs: load a word of `seccomp_data`,
 * compare it with a constant, return a verdict. Jumps name labels; `assemble()` resolves them to
 * the 8-bit forward offsets classic BPF allows and serializes the `struct sock_filter` array
 * (u16 code, u8 jt, u8 jf, u32 k, host byte order) that `seccomp(2)` — and bubblewrap's
 * `--seccomp FD` — take.
 *
 * Only the handful of instructions a syscall filter needs are offered; anything else is a
 * mistake here, so it cannot be expressed.
 */
import { endianness } from 'node:os';

/** Instruction classes and modes (linux/bpf_common.h). */
export const BpfOp = {
  /** A ← the 32-bit word at offset k of seccomp_data. */
  LoadAbsWord: 0x20, // BPF_LD | BPF_W | BPF_ABS
  /** pc += (A == k) ? jt : jf. */
  JumpEq: 0x15, // BPF_JMP | BPF_JEQ | BPF_K
  /** pc += (A >= k) ? jt : jf (unsigned). */
  JumpGe: 0x35, // BPF_JMP | BPF_JGE | BPF_K
  /** pc += (A & k) ? jt : jf. */
  JumpSet: 0x45, // BPF_JMP | BPF_JSET | BPF_K
  /** Return k (the seccomp verdict). */
  Return: 0x06, // BPF_RET | BPF_K
} as const;
export type BpfOp = (typeof BpfOp)[keyof typeof BpfOp];

/** One `struct sock_filter`. */
export interface BpfInstruction {
  code: number;
  jt: number;
  jf: number;
  k: number;
}

/** Bytes of one serialized instruction. */
export const BPF_INSTRUCTION_BYTES = 8;
/** The kernel's limit on a filter's length (BPF_MAXINSNS). */
export const BPF_MAX_INSTRUCTIONS = 4096;

export const BpfAssemblyErrorCode = {
  UnknownLabel: 'BPF_UNKNOWN_LABEL',
  DuplicateLabel: 'BPF_DUPLICATE_LABEL',
  JumpTooFar: 'BPF_JUMP_TOO_FAR',
  TooLong: 'BPF_TOO_LONG',
} as const;
export type BpfAssemblyErrorCode = (typeof BpfAssemblyErrorCode)[keyof typeof BpfAssemblyErrorCode];

/** A program that cannot be assembled (a bug in the filter's generator, never user input). */
export class BpfAssemblyError extends Error {
  constructor(
    readonly code: BpfAssemblyErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'BpfAssemblyError';
  }
}

/** Where a conditional jump goes: a label, or `null` for the next instruction. */
export type JumpTarget = string | null;

type Pending =
  | { kind: 'plain'; ins: BpfInstruction }
  | { kind: 'jump'; code: number; k: number; ifTrue: JumpTarget; ifFalse: JumpTarget };

/** Builds a program instruction by instruction; labels may be used before they are placed. */
export class BpfProgramBuilder {
  private readonly items: Pending[] = [];
  private readonly labels = new Map<string, number>();

  /** A ← the 32-bit word at `offset` in seccomp_data. */
  load(offset: number): this {
    this.items.push({ kind: 'plain', ins: { code: BpfOp.LoadAbsWord, jt: 0, jf: 0, k: offset } });
    return this;
  }

  /** Jumps to `ifTrue` when A == k, else to `ifFalse`. */
  jumpEq(k: number, ifTrue: JumpTarget, ifFalse: JumpTarget = null): this {
    return this.jump(BpfOp.JumpEq, k, ifTrue, ifFalse);
  }

  /** Jumps to `ifTrue` when A ≥ k (unsigned), else to `ifFalse`. */
  jumpGe(k: number, ifTrue: JumpTarget, ifFalse: JumpTarget = null): this {
    return this.jump(BpfOp.JumpGe, k, ifTrue, ifFalse);
  }

  /** Jumps to `ifTrue` when A & k is non-zero, else to `ifFalse`. */
  jumpSet(k: number, ifTrue: JumpTarget, ifFalse: JumpTarget = null): this {
    return this.jump(BpfOp.JumpSet, k, ifTrue, ifFalse);
  }

  /** Returns the verdict `k`. */
  ret(k: number): this {
    this.items.push({ kind: 'plain', ins: { code: BpfOp.Return, jt: 0, jf: 0, k: k >>> 0 } });
    return this;
  }

  /** Names the next instruction. */
  label(name: string): this {
    if (this.labels.has(name)) throw new BpfAssemblyError(BpfAssemblyErrorCode.DuplicateLabel, `bpf: label "${name}" placed twice`);
    this.labels.set(name, this.items.length);
    return this;
  }

  /** The instructions with every jump resolved to its offset. */
  instructions(): BpfInstruction[] {
    if (this.items.length > BPF_MAX_INSTRUCTIONS) {
      throw new BpfAssemblyError(BpfAssemblyErrorCode.TooLong, `bpf: ${this.items.length} instructions, the kernel takes at most ${BPF_MAX_INSTRUCTIONS}`);
    }
    return this.items.map((item, pc) => {
      if (item.kind === 'plain') return { ...item.ins };
      return { code: item.code, jt: this.offset(pc, item.ifTrue), jf: this.offset(pc, item.ifFalse), k: item.k };
    });
  }

  /** The serialized `struct sock_filter` array. */
  assemble(): Buffer {
    return serializeBpf(this.instructions());
  }

  private jump(code: number, k: number, ifTrue: JumpTarget, ifFalse: JumpTarget): this {
    this.items.push({ kind: 'jump', code, k: k >>> 0, ifTrue, ifFalse });
    return this;
  }

  /** Classic BPF jumps only forward, by at most 255 instructions past the next one. */
  private offset(pc: number, target: JumpTarget): number {
    if (target === null) return 0;
    const at = this.labels.get(target);
    if (at === undefined) throw new BpfAssemblyError(BpfAssemblyErrorCode.UnknownLabel, `bpf: jump at ${pc} to unknown label "${target}"`);
    const off = at - (pc + 1);
    if (off < 0 || off > 255) {
      throw new BpfAssemblyError(BpfAssemblyErrorCode.JumpTooFar, `bpf: jump at ${pc} to "${target}" (${at}) is out of a forward 8-bit offset`);
    }
    return off;
  }
}

/** Serializes instructions as the kernel reads them: host byte order. */
export function serializeBpf(program: readonly BpfInstruction[]): Buffer {
  const buf = Buffer.alloc(program.length * BPF_INSTRUCTION_BYTES);
  const le = endianness() === 'LE';
  program.forEach((ins, i) => {
    const at = i * BPF_INSTRUCTION_BYTES;
    if (le) buf.writeUInt16LE(ins.code, at);
    else buf.writeUInt16BE(ins.code, at);
    buf.writeUInt8(ins.jt, at + 2);
    buf.writeUInt8(ins.jf, at + 3);
    if (le) buf.writeUInt32LE(ins.k >>> 0, at + 4);
    else buf.writeUInt32BE(ins.k >>> 0, at + 4);
  });
  return buf;
}

/** Reads a serialized program back (tests, and anyone checking a filter file by hand). */
export function decodeBpf(buf: Buffer): BpfInstruction[] {
  if (buf.length % BPF_INSTRUCTION_BYTES !== 0) throw new RangeError(`bpf: ${buf.length} bytes is not a whole number of instructions`);
  const le = endianness() === 'LE';
  const out: BpfInstruction[] = [];
  for (let at = 0; at < buf.length; at += BPF_INSTRUCTION_BYTES) {
    out.push({
      code: le ? buf.readUInt16LE(at) : buf.readUInt16BE(at),
      jt: buf.readUInt8(at + 2),
      jf: buf.readUInt8(at + 3),
      k: le ? buf.readUInt32LE(at + 4) : buf.readUInt32BE(at + 4),
    });
  }
  return out;
}
