/**
 * A stand-in for the node simulator bench (test/bench/nodesim-teardown.test.ts): starts a
 * long-lived child process as the bench starts its servers, registers its stop with a
 * BenchTeardown, prints the child's pid, then ends as argv[2] says: "throw" (an uncaught
 * exception from a timer, as a crashing simulated client's), "reject" (an unhandled rejection)
 * or "wait" (until a signal).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { BenchTeardown } from '../../bench/nodesim/bench-teardown.js';

const teardown = new BenchTeardown(() => undefined);
teardown.installExitHandlers();
const server = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1e6)'], { stdio: 'ignore' });
teardown.add('the server', async () => {
  server.kill('SIGTERM');
  if (server.exitCode === null && server.signalCode === null) await once(server, 'exit');
});
console.log(String(server.pid));
const how = process.argv[2];
if (how === 'throw') {
  setTimeout(() => {
    throw new Error('a simulated client crashed');
  }, 50);
} else if (how === 'reject') {
  setTimeout(() => void Promise.reject(new Error('a simulated client rejected')), 50);
} else {
  setInterval(() => undefined, 1e6);
}
