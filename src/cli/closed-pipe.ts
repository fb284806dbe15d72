/**
 * A CLI whose reader went away (`caravan job run web.hcl | head -1`) exits quietly, as a Go
 * program killed by SIGPIPE does: Node.js instead emits EPIPE as an 'error' on stdout/stderr,
 * which, unhandled, crashes the process with a stack trace.
 */

/** Makes an EPIPE on `stream` end the process at once, without output; other errors are rethrown. */
export function exitQuietlyOnClosedPipe(stream: NodeJS.WriteStream, exit: (code: number) => never = process.exit): void {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw err;
  });
}
