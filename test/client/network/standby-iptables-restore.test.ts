/**
 * The standby iptables-restore (issue 29): the port rules of a set-up go to a process started
 * before they were asked for, applied as a new process would apply them — also when the standby
 * was killed meanwhile, or changes were made after it started; a bad ruleset changes nothing;
 * an idle standby holds nothing other iptables commands wait for, and close() ends it having
 * applied nothing. On the real kernel's nat table, in a chain of the test's own. Needs root.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { StandbyIptablesRestore } from '../../../src/client/network/standby-iptables-restore.js';
import { hasErrorCode } from '../../../src/structs/caravan-error.js';
import { requireGroupNetworking } from '../../integration/helpers/group-network.js';

const CHAIN = `CVSB-${randomBytes(4).toString('hex').toUpperCase()}`;

/** This test process's iptables-restore children (the standby), by pid. */
function restoreChildren(): number[] {
  const out: number[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // "pid (comm) state ppid …"
      const m = /^\d+ \((.*)\) \S (\d+) /.exec(stat);
      if (m && Number(m[2]) === process.pid && m[1]!.startsWith('iptables')) out.push(Number(pid));
    } catch {
      // exited meanwhile
    }
  }
  return out;
}

function natRules(): string[] {
  return execFileSync('iptables-save', ['-t', 'nat'], { encoding: 'utf8' }).split('\n').filter((l) => l.includes(CHAIN));
}

const addChain = (port: number): string => `*nat\n:${CHAIN} - [0:0]\n-A ${CHAIN} -p tcp -m tcp --dport ${port} -j RETURN\nCOMMIT\n`;
const dropChain = `*nat\n-F ${CHAIN}\n-X ${CHAIN}\nCOMMIT\n`;

after(() => {
  execFileSync('sh', ['-c', `iptables -w -t nat -F ${CHAIN} 2>/dev/null; iptables -w -t nat -X ${CHAIN} 2>/dev/null; true`]);
});

test('the text goes to a process started before it was asked for, and is applied; a standby killed meanwhile is replaced by a new process', async () => {
  requireGroupNetworking();
  // Replacements are held back until the test lets them go, as the client holds them during a set-up.
  let release = (): void => undefined;
  let gate = Promise.resolve();
  const standby = new StandbyIptablesRestore({ beforeSpawn: () => gate });
  try {
    standby.refill();
    await standby.settled();
    assert.equal(standby.ready, true);
    const [pid] = restoreChildren();
    assert.ok(pid, 'the standby runs before any text is asked for');

    gate = new Promise<void>((resolve) => (release = resolve));
    // Made after the standby started: its text applies against the rules as they are now.
    execFileSync('iptables', ['-w', '-t', 'nat', '-N', CHAIN]);
    await standby.apply(`*nat\n-A ${CHAIN} -p tcp -m tcp --dport 29811 -j RETURN\nCOMMIT\n`);
    assert.ok(natRules().includes(`-A ${CHAIN} -p tcp -m tcp --dport 29811 -j RETURN`));
    assert.equal(standby.ready, false, 'the standby was used up; the replacement waits for the owner');
    assert.deepEqual(restoreChildren(), [], 'the standby exited once its text was applied');

    release();
    await standby.settled();
    const [next] = restoreChildren();
    assert.ok(next && next !== pid, 'a replacement was started');
    // Killed behind the client's back: it never saw the text, which a new process applies.
    process.kill(next, 'SIGKILL');
    while (restoreChildren().includes(next)) await new Promise((resolve) => setTimeout(resolve, 10));
    gate = new Promise<void>((resolve) => (release = resolve));
    await standby.apply(dropChain);
    assert.deepEqual(natRules(), []);
    release();
  } finally {
    await standby.close();
  }
  assert.deepEqual(restoreChildren(), [], 'close() ends the standby');
});

test('a bad ruleset is refused with what the tool printed, changing nothing; an idle standby holds nothing; close() applies nothing', async () => {
  requireGroupNetworking();
  const standby = new StandbyIptablesRestore();
  try {
    standby.refill();
    await standby.settled();
    // One good line, then one the tool refuses: the whole text is one transaction.
    await assert.rejects(standby.apply(`*nat\n:${CHAIN} - [0:0]\n-A ${CHAIN} -p tcp -m tcp --dport 70000 -j RETURN\nCOMMIT\n`), (err: unknown) => hasErrorCode(err, 'CLIENT_IPTABLES') && /70000|port/i.test((err as Error).message));
    assert.deepEqual(natRules(), [], 'nothing of a refused text is applied');

    await standby.settled();
    assert.equal(standby.ready, true);
    // Another iptables run (a CNI plugin's, with its own wait) is not held up by the idle standby.
    execFileSync('iptables', ['-w', '2', '-t', 'nat', '-N', CHAIN]);
    execFileSync('iptables', ['-w', '2', '-t', 'nat', '-X', CHAIN]);
    await standby.apply(addChain(29812));
    assert.ok(natRules().includes(`-A ${CHAIN} -p tcp -m tcp --dport 29812 -j RETURN`));
    await standby.settled();
    await standby.apply(dropChain);
  } finally {
    await standby.close();
  }
  assert.deepEqual(restoreChildren(), []);
  assert.deepEqual(natRules(), [], 'the idle standby closed without applying anything');
});
