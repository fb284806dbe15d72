/** Fixtures of the artifact hook tests: a real allocation directory, a hook request, a loopback HTTP server. */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskHookRequest, TaskPrep } from '../../../src/client/taskrunner/interfaces.js';
import { canonicalizeArtifact, type TaskArtifact } from '../../../src/structs/template.js';

/** An allocation directory under a fresh temp root: `<root>/alloc-1/{alloc/data,t/{local,secrets,tmp}}`. */
export interface AllocFixture {
  /** The temp root; the test may create "host" files here, outside the allocation. */
  root: string;
  allocDir: string;
  taskDir: string;
  prep: TaskPrep;
}

/** Runs `fn` with a fresh allocation directory, removed afterwards. */
export async function withAllocDir(fn: (f: AllocFixture) => Promise<void>): Promise<void> {
  const root = await mkdtemp(join(tmpdir(), 'caravan-artifact-'));
  const allocDir = join(root, 'alloc-1');
  const taskDir = join(allocDir, 't');
  const shared = join(allocDir, 'alloc');
  for (const d of [join(shared, 'data'), join(shared, 'logs'), join(taskDir, 'local'), join(taskDir, 'secrets'), join(taskDir, 'tmp')]) await mkdir(d, { recursive: true });
  const prep: TaskPrep = {
    dirs: { dir: taskDir, localDir: join(taskDir, 'local'), secretsDir: join(taskDir, 'secrets'), tmpDir: join(taskDir, 'tmp'), sharedAllocDir: shared, logDir: join(shared, 'logs') },
    env: {},
    driverConfig: {},
    logs: null,
  };
  try {
    await fn({ root, allocDir, taskDir, prep });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/** A prestart request for a task with these artifacts (canonicalized as the server would). */
export function artifactRequest(artifacts: Partial<TaskArtifact>[]): TaskHookRequest {
  return {
    task: { Name: 't', Artifacts: artifacts.map(canonicalizeArtifact) },
    alloc: { ID: 'alloc-1', Namespace: 'default', Job: null },
    node: { region: 'global' },
    signal: new AbortController().signal,
    lifecycle: { restart: async () => {}, signal: async () => {}, emit: () => {} },
  } as unknown as TaskHookRequest;
}

/** Runs `fn` with a loopback HTTP server answering with `handler`; closed afterwards. */
export async function withHttpServer(handler: (req: IncomingMessage, res: ServerResponse) => void, fn: (base: string) => Promise<void>): Promise<void> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
