/**
 * Which users a task may run as: Nomad's client options `user.denylist` (default
 * "root,Administrator"; `user.blacklist` is its old name) applied to the drivers in
 * `user.checked_drivers` (default "exec,qemu,java"). A task of a checked driver whose `user` is
 * denied fails before it starts (the validate hook). Setting `user.denylist = ""` allows every
 * user, as in Nomad.
 *
 * Caravan also refuses a name that resolves (in the host's /etc/passwd, where the drivers resolve
 * it) to the uid of a denied user — `user = "0"`, or a second uid-0 account — which Nomad's
 * name-only comparison lets through.
 */

/** Nomad's default `user.denylist`. */
export const DEFAULT_USER_DENYLIST = 'root,Administrator';
/** Nomad's default `user.checked_drivers`. */
export const DEFAULT_USER_CHECKED_DRIVERS = 'exec,qemu,java';

/** The client's user policy, read from its options. */
export interface TaskUserPolicy {
  readonly denied: ReadonlySet<string>;
  readonly checkedDrivers: ReadonlySet<string>;
}

/** One account of the host's passwd database. */
export interface PasswdEntry {
  name: string;
  uid: number;
}

/** Nomad's list option: comma-separated, each entry trimmed; an empty value is an empty list. */
function list(value: string): Set<string> {
  return new Set(value === '' ? [] : value.split(',').map((e) => e.trim()));
}

/** The policy given by a client's `options` (unset keys take Nomad's defaults). */
export function taskUserPolicy(options: Readonly<Record<string, string>> = {}): TaskUserPolicy {
  const denylist = options['user.denylist'] ?? options['user.blacklist'] ?? DEFAULT_USER_DENYLIST;
  const checked = options['user.checked_drivers'] ?? DEFAULT_USER_CHECKED_DRIVERS;
  return { denied: list(denylist), checkedDrivers: list(checked) };
}

/** Parses /etc/passwd text (malformed lines skipped). */
export function parsePasswd(text: string): PasswdEntry[] {
  const out: PasswdEntry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 4 || f[0] === '' || !/^\d+$/.test(f[2]!)) continue;
    out.push({ name: f[0]!, uid: Number(f[2]) });
  }
  return out;
}

/**
 * Why a task of `driver` may not run as `user`, or null when it may. `readPasswd` gives the
 * host's accounts (read only when needed), for resolving names and numeric uids to the uid
 * they run as.
 */
export function refusedTaskUser(policy: TaskUserPolicy, driver: string, user: string, readPasswd: () => readonly PasswdEntry[]): string | null {
  if (!policy.checkedDrivers.has(driver) || policy.denied.size === 0) return null;
  const disallowed = `running as user ${JSON.stringify(user)} is disallowed`;
  if (policy.denied.has(user)) return disallowed;
  if (user === '') return null;
  const passwd = readPasswd();
  const deniedUids = new Set(passwd.filter((e) => policy.denied.has(e.name)).map((e) => e.uid));
  const entry = passwd.find((e) => e.name === user) ?? passwd.find((e) => String(e.uid) === user);
  if (entry && deniedUids.has(entry.uid)) {
    const owner = passwd.find((e) => e.uid === entry.uid && policy.denied.has(e.name))!;
    return `${disallowed} (it is uid ${entry.uid}, as ${JSON.stringify(owner.name)})`;
  }
  return null;
}
