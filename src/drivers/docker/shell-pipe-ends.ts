/**
 * This process's ends of the anonymous pipes a container's resident exec shell makes for one
 * command (resident-shell.ts): the shell holds them at fds 7 (stdin's read end), 8 and 9
 * (stdout's and stderr's write ends), and the agent opens
 * /proc/<shell>/fd/N — stdin for writing, stdout and stderr for reading — which for an anonymous
 * pipe gives a new description of that same pipe. The command thus reads and writes real pipes,
 * as under Nomad (runc's), and no byte goes through a copying process.
 *
 * Everything in the container is the container's: a process there could make the shell's fd 7
 * a file it may only read, or a FIFO with no reader. So the shell's /proc directory is held
 * open from the start (a pid reused after the shell died does not lead elsewhere), every open is
 * O_NONBLOCK | O_NOCTTY (a FIFO cannot block the agent, a terminal cannot become its own), and an
 * end is kept only if it is an anonymous pipe (`pipe:[…]`); anything else is closed unread and
 * unwritten, and the exec refused.
 */
import { closeSync, constants as C, fstatSync, openSync, readlinkSync } from 'node:fs';
import { pathAt } from '../../fs/confined-fs.js';

/** Raised when an end is not an anonymous pipe of the shell's. */
export class PipeEndRefused extends Error {
  readonly code = 'DOCKER_EXEC_PIPE_REFUSED';
}

/** The agent's ends of one command's stdio: stdin to write, stdout and stderr to read. */
export interface PipeEnds {
  stdin: number;
  stdout: number;
  stderr: number;
}

/** The fds the shell's pipes are at, as the script puts them. */
export const SHELL_PIPE_FDS = { stdin: 7, stdout: 8, stderr: 9 } as const;

/** The /proc directory of one resident shell, held open. */
export class ShellPipeEnds {
  private constructor(private readonly dirFd: number) {}

  /**
   * Holds /proc/<hostPid>. `sameAs` (the container's main process) must share its pid
   * namespace: a shell that died and whose pid went to a host process is not taken.
   */
  static open(hostPid: number, sameAs: number): ShellPipeEnds {
    if (!Number.isInteger(hostPid) || hostPid <= 1) throw new PipeEndRefused(`exec shell pid ${hostPid} is not a process id`);
    let dirFd: number;
    try {
      dirFd = openSync(`/proc/${hostPid}`, C.O_RDONLY | C.O_DIRECTORY);
    } catch (err) {
      throw new PipeEndRefused(`exec shell /proc/${hostPid}: ${(err as Error).message}`);
    }
    try {
      if (readlinkSync(pathAt(dirFd, 'ns/pid')) !== readlinkSync(`/proc/${sameAs}/ns/pid`)) throw new PipeEndRefused(`process ${hostPid} is not in the container`);
    } catch (err) {
      closeSync(dirFd);
      throw err instanceof PipeEndRefused ? err : new PipeEndRefused(`exec shell /proc/${hostPid}: ${(err as Error).message}`);
    }
    return new ShellPipeEnds(dirFd);
  }

  /** Opens the three ends of the pipes the shell holds now; all checked, or none kept. */
  take(): PipeEnds {
    const got: number[] = [];
    try {
      got.push(this.end(SHELL_PIPE_FDS.stdin, C.O_WRONLY));
      got.push(this.end(SHELL_PIPE_FDS.stdout, C.O_RDONLY));
      got.push(this.end(SHELL_PIPE_FDS.stderr, C.O_RDONLY));
    } catch (err) {
      for (const fd of got) closeSync(fd);
      throw err;
    }
    const [stdin, stdout, stderr] = got as [number, number, number];
    return { stdin, stdout, stderr };
  }

  close(): void {
    closeSync(this.dirFd);
  }

  private end(fd: number, mode: number): number {
    let opened: number;
    try {
      opened = openSync(pathAt(this.dirFd, `fd/${fd}`), mode | C.O_NONBLOCK | C.O_NOCTTY);
    } catch (err) {
      throw new PipeEndRefused(`exec shell fd ${fd}: ${(err as Error).message}`);
    }
    let target = '';
    try {
      target = fstatSync(opened).isFIFO() ? readlinkSync(`/proc/self/fd/${opened}`) : '';
    } catch {
      target = '';
    }
    if (!/^pipe:\[\d+\]$/.test(target)) {
      closeSync(opened);
      throw new PipeEndRefused(`exec shell fd ${fd} is not an anonymous pipe; refused`);
    }
    return opened;
  }
}
