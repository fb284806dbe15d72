/**
 * What an exec'd command without a terminal must find as its stdin, stdout and stderr, checked
 * the same way for every driver and path (issue 27): pipes as Nomad gives them — re-openable
 * through /dev/stdin and /proc/self/fd/N, end-of-file once the caller closes stdin (also for a
 * command that opens /dev/stdin after that), SIGPIPE not ignored — and Poseidon's file copy,
 * `tar` reading a ≥ 10 MB archive from /dev/stdin.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The outcome of one exec: raw stdout, stderr as text, exit code. */
export interface BytesResult {
  stdout: Buffer;
  stderr: string;
  code: number;
}

/** Runs `cmd` (no terminal); with `input`, writes it and then closes stdin. */
export type RunExec = (cmd: string[], input?: Buffer) => Promise<BytesResult>;

/** A tar archive of a 10.5 MB random file and a small text file, with their digests. */
export function makeArchive(scratch: string): { tar: Buffer; big: string; small: string } {
  const src = mkdtempSync(join(scratch, 'tar-src-'));
  try {
    const big = randomBytes(10.5 * 1024 * 1024);
    writeFileSync(join(src, 'big.bin'), big);
    mkdirSync(join(src, 'sub'));
    writeFileSync(join(src, 'sub', 'small.txt'), 'hello from the archive\n');
    execFileSync('tar', ['-cf', join(src, 'a.tar'), '-C', src, 'big.bin', 'sub/small.txt']);
    const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
    return { tar: readFileSync(join(src, 'a.tar')), big: sha(big), small: sha('hello from the archive\n') };
  } finally {
    rmSync(src, { recursive: true, force: true });
  }
}

const text = (r: BytesResult) => r.stdout.toString();

/**
 * Runs every check through `run`. `scratch` is a host directory for the archive; `extractDir`
 * a directory the command may create and fill (in the task's view of the filesystem).
 */
export async function checkPipeStdio(run: RunExec, scratch: string, extractDir = '/tmp/caravan-stdio-check'): Promise<void> {
  // What the descriptors are: three distinct anonymous pipes; /dev/stdin is a FIFO to stat.
  const kinds = await run(['sh', '-c', 'for n in 0 1 2; do readlink /proc/self/fd/$n; done; readlink /proc/self/fd/2 >&2; stat -L -c %F /dev/stdin'], Buffer.alloc(0));
  assert.equal(kinds.code, 0, kinds.stderr);
  const [in0, out1, err2, fstatKind] = text(kinds).trim().split('\n');
  for (const link of [in0, out1, err2]) assert.match(link ?? '', /^pipe:\[\d+\]$/, `stdio is a pipe: ${text(kinds)}`);
  assert.equal(new Set([in0, out1, err2]).size, 3, 'three distinct pipes');
  assert.equal(kinds.stderr.trim(), err2, 'stderr is the third pipe');
  assert.equal(fstatKind, 'fifo', 'fstat of stdin shows a pipe');

  // Reopened by path after the caller has closed its end (Poseidon's case): the bytes, then EOF.
  const reopened = await run(['sh', '-c', 'sleep 0.5; cat /dev/stdin | wc -c'], Buffer.alloc(10240, 7));
  assert.deepEqual({ out: text(reopened).trim(), code: reopened.code }, { out: '10240', code: 0 }, reopened.stderr);
  const viaProc = await run(['sh', '-c', 'wc -c < /proc/self/fd/0'], Buffer.alloc(4096, 1));
  assert.equal(text(viaProc).trim(), '4096', viaProc.stderr);

  // End-of-file when the caller closes stdin, with nothing written and after some input.
  const empty = await run(['sh', '-c', 'cat /dev/stdin; echo "<eof>"'], Buffer.alloc(0));
  assert.deepEqual({ out: text(empty), code: empty.code }, { out: '<eof>\n', code: 0 }, empty.stderr);
  const some = await run(['sh', '-c', 'cat; echo "<eof>"'], Buffer.from('abc'));
  assert.equal(text(some), 'abc<eof>\n');

  // SIGPIPE is not ignored: a writer whose reader went away dies of it, as under Nomad.
  const status = await run(['cat', '/proc/self/status']);
  const ign = /^SigIgn:\s*([0-9a-f]+)$/m.exec(text(status))?.[1];
  assert.ok(ign !== undefined, text(status));
  assert.equal(BigInt(`0x${ign}`) & (1n << 12n), 0n, `SIGPIPE ignored in the command: SigIgn ${ign}`);
  const piped = await run(['sh', '-c', 'yes | head -n 2']);
  assert.deepEqual({ out: text(piped), code: piped.code }, { out: 'y\ny\n', code: 0 });

  // Poseidon's file copy: tar reads the archive from /dev/stdin, closed after the last byte.
  const archive = makeArchive(scratch);
  const copied = await run(['sh', '-c', `rm -rf ${extractDir} && mkdir -p ${extractDir} && tar -x -v -f /dev/stdin -C ${extractDir} && sha256sum ${extractDir}/big.bin ${extractDir}/sub/small.txt && rm -rf ${extractDir}`], archive.tar);
  assert.equal(copied.code, 0, `tar: ${copied.stderr}`);
  const sums = text(copied);
  assert.match(sums, /big\.bin/, 'tar lists what it extracted');
  assert.ok(sums.includes(`${archive.big}  ${extractDir}/big.bin`), sums);
  assert.ok(sums.includes(`${archive.small}  ${extractDir}/sub/small.txt`), sums);
}
