/**
 * Named network namespaces, as iproute2 keeps them: a bind mount of the namespace at
 * /var/run/netns/<name>, which holds it alive with no process inside and lets any process
 * join it by path (nsenter --net=<path>, setns). Caravan names an allocation's after its ID,
 * as Nomad does.
 */
import { execFile } from 'node:child_process';
import { access, lstat, rm, symlink } from 'node:fs/promises';
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

/**
 * Removes the named namespace (its interfaces go with it); a missing one is not an error. A
 * second name made by aliasNetns (a symbolic link) is only unlinked: the namespace keeps its
 * first name, which its owner removes the same way.
 */
export async function deleteNetns(name: string): Promise<void> {
  const path = netnsPath(name);
  // lstat, not access: a second name whose first one is gone is a dangling link, still to remove.
  const stats = await lstat(path).catch(() => null);
  if (!stats) return;
  if (stats.isSymbolicLink()) {
    await rm(path, { force: true });
    return;
  }
  try {
    await ip(['netns', 'delete', name]);
  } catch (err) {
    // Gone in between (another teardown of the same allocation): what was asked is done.
    if (await netnsExists(name)) throw err;
  }
}

/**
 * Gives the namespace named `from` a second name, `to`: a symbolic link to it beside it in
 * NETNS_DIR — how a warm namespace comes to be named after the allocation that takes it. Who
 * joins or enters the namespace by path (nsenter --net=, setns, the CNI plugins, `ip netns
 * exec`) follows the link to the same namespace. A link, not a second bind mount (`mount
 * --bind`): no process on the allocation's path (issue 29: a process costs 5–30 ms on a 2-core
 * client). So `from` keeps naming the namespace while `to` is in use: remove `to` first
 * (deleteNetns only unlinks it), then `from`. Fails, changing nothing, when `to` exists.
 */
export async function aliasNetns(from: string, to: string): Promise<string> {
  const target = netnsPath(to);
  // Relative: the link names its sibling, wherever NETNS_DIR is mounted. symlink never replaces what is there.
  await symlink(from, target);
  return target;
}
