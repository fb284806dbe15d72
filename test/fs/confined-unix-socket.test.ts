/**
 * listenConfinedUnixSocket: the socket lands in the named directory, mode 0600, whatever the
 * task planted under its name (a symlink to a file, a dangling symlink, a stale socket) is
 * replaced and never followed; a directory under the name or a symlinked directory is refused;
 * close removes the socket; a data-dir path longer than sun_path still works.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listenConfinedUnixSocket } from '../../src/fs/confined-unix-socket.js';
import { ConfinementError } from '../../src/fs/confined-fs.js';

const root = mkdtempSync(join(tmpdir(), 'cv-sock-'));
after(() => rmSync(root, { recursive: true, force: true }));

/** A task dir with secrets/ under `root`. */
function taskDir(name: string): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'secrets'), { recursive: true });
  return dir;
}

/** Connects, reads what the server writes, resolves it. */
function roundTrip(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = connect(path);
    let got = '';
    c.setEncoding('utf8').on('data', (d: string) => (got += d));
    c.on('end', () => resolve(got));
    c.on('error', reject);
  });
}

const listen = (dir: string) => listenConfinedUnixSocket({ root: dir, dir: 'secrets', name: 'api.sock', owner: null, onConnection: (s) => s.end('hello') });

describe('listenConfinedUnixSocket', () => {
  it('listens at <dir>/api.sock with mode 0600 and removes it on close', async () => {
    const dir = taskDir('plain');
    const s = await listen(dir);
    const path = join(dir, 'secrets', 'api.sock');
    assert.ok(lstatSync(path).isSocket());
    assert.equal(lstatSync(path).mode & 0o777, 0o600);
    assert.equal(await roundTrip(path), 'hello');
    await s.close();
    await s.close();
    assert.equal(existsSync(path), false);
  });

  it('replaces a planted symlink (to a file, or dangling into another directory) without following it', async () => {
    const victim = join(root, 'victim.txt');
    writeFileSync(victim, 'keep');
    const victimDir = join(root, 'victim-dir');
    mkdirSync(victimDir);
    for (const [name, target] of [['to-file', victim], ['dangling', join(victimDir, 'api.sock')]] as const) {
      const dir = taskDir(name);
      symlinkSync(target, join(dir, 'secrets', 'api.sock'));
      const s = await listen(dir);
      assert.ok(lstatSync(join(dir, 'secrets', 'api.sock')).isSocket(), name);
      await s.close();
    }
    assert.equal(readFileSync(victim, 'utf8'), 'keep');
    assert.deepEqual(readdirSync(victimDir), []);
  });

  it('replaces a stale socket of a previous agent', async () => {
    const dir = taskDir('stale');
    const path = join(dir, 'secrets', 'api.sock');
    // An agent killed while listening leaves its socket file behind.
    const crashed = spawnSync(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => process.kill(process.pid, 'SIGKILL'))`]);
    assert.equal(crashed.signal, 'SIGKILL');
    assert.ok(lstatSync(path).isSocket());
    const s = await listen(dir);
    assert.equal(await roundTrip(path), 'hello');
    await s.close();
  });

  it('refuses a directory under the name and a symlinked secrets directory', async () => {
    const withDir = taskDir('with-dir');
    mkdirSync(join(withDir, 'secrets', 'api.sock'));
    await assert.rejects(listen(withDir), ConfinementError);
    assert.ok(lstatSync(join(withDir, 'secrets', 'api.sock')).isDirectory());

    const elsewhere = join(root, 'elsewhere');
    mkdirSync(elsewhere);
    const linked = join(root, 'linked');
    mkdirSync(linked);
    symlinkSync(elsewhere, join(linked, 'secrets'));
    await assert.rejects(listen(linked), ConfinementError);
    assert.deepEqual(readdirSync(elsewhere), []);
  });

  it('works below a path longer than a socket address holds', async () => {
    const deep = join(root, 'd'.repeat(60), 'e'.repeat(60));
    mkdirSync(join(deep, 'secrets'), { recursive: true });
    const s = await listen(deep);
    assert.ok(lstatSync(join(deep, 'secrets', 'api.sock')).isSocket());
    await s.close();
  });
});
