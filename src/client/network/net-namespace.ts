/**
 * Named network namespaces, as iproute2 keeps them: a bind mount of the namespace at
 * /var/run/netns/<name>, which holds it alive with no process inside and lets any process
 * join it by path (nsenter --net=<path>, setns). Caravan names an allocation's after its ID,
 * as Nomad does.
 */
import { execFile } from 'node:child_process';
import { access, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Where iproute2 mounts named namespaces. */
export const NETNS_DIR = '/var/run/netns';

/** The path of the named namespace. */
export function netnsPath(name: string): string {
  return join(NETNS_DIR, name);
}

function run(cmd: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { timeout: 30_000 }, (err, _out, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')}: ${String(stderr).trim() || err.message}`));
      else resolve();
    });
  });
}

function ip(args: string[]): Promise<void> {
  return run('ip', args);
}

/** Whether the named namespace exists. */
export async function netnsExists(name: string): Promise<boolean> {
  try {
    await access(netnsPath(name));
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates the named namespace; an existing one is kept (idempotent). `loopbackUp` brings its
 * loopback up here (mode "none": no CNI loopback plugin runs there).
 */
export async function createNetns(name: string, loopbackUp: boolean): Promise<string> {
  if (!(await netnsExists(name))) await ip(['netns', 'add', name]);
  if (loopbackUp) await ip(['-n', name, 'link', 'set', 'lo', 'up']);
  return netnsPath(name);
}

/**
 * Names the namespace `pid` is in (`ip netns attach`): a driver's sandbox (docker's pause
 * container) then has the same path as one made by createNetns, for CNI and for tasks that
 * join by path. A name already taken is replaced (a stale one of an earlier attempt).
 */
export async function attachNetns(name: string, pid: number, loopbackUp: boolean): Promise<string> {
  if (await netnsExists(name)) await deleteNetns(name);
  await ip(['netns', 'attach', name, String(pid)]);
  if (loopbackUp) await ip(['-n', name, 'link', 'set', 'lo', 'up']);
  return netnsPath(name);
}

/** Removes the named namespace (its interfaces go with it); a missing one is not an error. */
export async function deleteNetns(name: string): Promise<void> {
  if (!(await netnsExists(name))) return;
  try {
    await ip(['netns', 'delete', name]);
  } catch (err) {
    // Gone in between (another teardown of the same allocation): what was asked is done.
    if (await netnsExists(name)) throw err;
  }
}

/**
 * Gives the namespace named `from` a second name, `to` (a bind mount of the same namespace, as
 * `ip netns add` makes the first): how a warm namespace comes to be named after the allocation
 * that takes it. `ip netns delete <from>` later drops the old name only. `to` must not exist.
 */
export async function aliasNetns(from: string, to: string): Promise<string> {
  const target = netnsPath(to);
  // 'wx': never mount over a name that is already someone's namespace.
  await writeFile(target, '', { flag: 'wx', mode: 0o444 });
  try {
    await run('mount', ['--bind', netnsPath(from), target]);
  } catch (err) {
    await rm(target, { force: true });
    throw err;
  }
  return target;
}
