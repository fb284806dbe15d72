/**
 * Hostile artifacts (issue 26 item 2): a job submitter tries to copy a client host file into
 * its task with an artifact. Each attempt is refused with an error naming the source, and
 * nothing from the host lands in the task directory. The "host" files are files this test
 * creates outside the allocation directory.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { link, mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ArtifactHook } from '../../src/client/taskrunner/hooks/artifact-hook.js';
import { TaskSetupError } from '../../src/client/taskrunner/task-setup-error.js';
import type { TaskArtifact } from '../../src/structs/template.js';
import { artifactRequest, withAllocDir, withHttpServer, type AllocFixture } from '../client/hooks/artifact-fixture.js';

const SECRET = 'root:$6$host-secret-hash:19000:0:99999:7:::\n';

/** Every entry but directories below `dir` (files, links), relative to it; only regular files with `filesOnly`. */
async function filesBelow(dir: string, filesOnly = false): Promise<string[]> {
  const out: string[] = [];
  for (const ent of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (filesOnly ? ent.isFile() : !ent.isDirectory()) out.push(relative(dir, join(ent.parentPath, ent.name)));
  }
  return out.sort();
}

/** A "host" file and directory outside the allocation, holding SECRET. */
async function plantHostFiles(f: AllocFixture): Promise<{ file: string; dir: string }> {
  const dir = join(f.root, 'host-etc');
  await mkdir(dir);
  const file = join(dir, 'shadow');
  await writeFile(file, SECRET, { mode: 0o600 });
  return { file, dir };
}

async function assertRefused(f: AllocFixture, a: Partial<TaskArtifact>, reason: RegExp, planted: string[] = []): Promise<void> {
  const before = await filesBelow(f.taskDir);
  await assert.rejects(new ArtifactHook().prestart(artifactRequest([a]), f.prep), (e: unknown) => {
    assert.ok(e instanceof TaskSetupError, `${String(e)}`);
    assert.match(e.message, reason);
    return true;
  });
  assert.deepEqual(await filesBelow(f.taskDir), before, `nothing was copied for ${JSON.stringify(a)}`);
  for (const p of await filesBelow(f.allocDir, true)) {
    if (planted.includes(p)) continue;
    assert.ok(!(await readFile(join(f.allocDir, p), 'utf8')).includes('host-secret'), `${p} holds the host file`);
  }
}

describe('artifacts cannot read client host files', () => {
  it('an absolute host path is refused', async () => {
    await withAllocDir(async (f) => {
      const host = await plantHostFiles(f);
      await assertRefused(f, { GetterSource: host.file }, /absolute host paths are refused/);
      await assertRefused(f, { GetterSource: host.dir }, /absolute host paths are refused/);
      await assertRefused(f, { GetterSource: host.file, GetterMode: 'file', RelativeDest: 'local/x' }, /absolute host paths are refused/);
    });
  });

  it('a file:// URL is refused, in every spelling', async () => {
    await withAllocDir(async (f) => {
      const host = await plantHostFiles(f);
      for (const source of [pathToFileURL(host.file).href, pathToFileURL(host.dir).href, `FILE://${host.file}`, `file:${host.file}`, `file::${host.file}`]) {
        await assertRefused(f, { GetterSource: source }, /file:\/\/ URLs|getter "file" is not supported/);
      }
    });
  });

  it('a relative path climbing out of the allocation with ../ is refused', async () => {
    await withAllocDir(async (f) => {
      const host = await plantHostFiles(f);
      const up = relative(f.taskDir, host.file);
      assert.ok(up.startsWith('../'));
      await assertRefused(f, { GetterSource: up }, /leaves the task directory/);
      await assertRefused(f, { GetterSource: `local/../../../${relative(f.root, host.file)}` }, /leaves the task directory/);
      // A sibling task's directory (its secrets) is not the shared alloc directory.
      await mkdir(join(f.allocDir, 'other', 'secrets'), { recursive: true });
      await writeFile(join(f.allocDir, 'other', 'secrets', 'token'), 'sibling-token');
      await assertRefused(f, { GetterSource: '../other/secrets/token' }, /leaves the task directory/);
    });
  });

  it('a symlink or hard link the task planted towards a host file is not followed', async () => {
    await withAllocDir(async (f) => {
      const host = await plantHostFiles(f);
      await symlink(host.file, join(f.taskDir, 'local', 'shadow-link'));
      await symlink(host.dir, join(f.taskDir, 'local', 'etc-link'));
      await symlink(host.dir, join(f.allocDir, 'alloc', 'data', 'etc-link'));
      await assertRefused(f, { GetterSource: 'local/shadow-link' }, /symlink/);
      await assertRefused(f, { GetterSource: 'local/etc-link', RelativeDest: 'tmp/' }, /symlink/);
      await assertRefused(f, { GetterSource: 'local/etc-link/shadow' }, /symlink/);
      await assertRefused(f, { GetterSource: '../alloc/data/etc-link/shadow' }, /symlink/);
      // A directory holding a link: the link is recreated as a link, never read through.
      await mkdir(join(f.taskDir, 'local', 'tree'));
      await symlink(host.file, join(f.taskDir, 'local', 'tree', 'shadow'));
      await new ArtifactHook().prestart(artifactRequest([{ GetterSource: 'local/tree', RelativeDest: 'tmp/tree' }]), f.prep);
      assert.equal((await readdir(join(f.taskDir, 'tmp', 'tree'))).length, 1);
      assert.equal(await readFile(host.file, 'utf8'), SECRET);
      // A hard link to a host file (same filesystem) is refused.
      await link(host.file, join(f.taskDir, 'local', 'hard'));
      await assertRefused(f, { GetterSource: 'local/hard', GetterMode: 'file', RelativeDest: 'tmp/hard-copy' }, /hard links/, ['t/local/hard']);
    });
  });

  it('a destination leaving the task directory is refused', async () => {
    await withAllocDir(async (f) => {
      await writeFile(join(f.taskDir, 'local', 'f'), 'f');
      await assertRefused(f, { GetterSource: 'local/f', GetterMode: 'file', RelativeDest: '../../escaped' }, /escapes the task directory/);
      await assertRefused(f, { GetterSource: 'local/f', RelativeDest: '/etc' }, /escapes the task directory/);
    });
  });

  it('an http URL redirecting to file:// or another scheme is refused', async () => {
    await withAllocDir(async (f) => {
      const host = await plantHostFiles(f);
      await withHttpServer((req, res) => {
        const to = req.url === '/to-file' ? pathToFileURL(host.file).href : req.url === '/to-ftp' ? 'ftp://127.0.0.1/x' : 'file:///etc/passwd';
        res.writeHead(302, { location: to }).end();
      }, async (base) => {
        await assertRefused(f, { GetterSource: `${base}/to-file` }, /redirected to "file:.*scheme "file" is not allowed/);
        await assertRefused(f, { GetterSource: `${base}/to-ftp` }, /scheme "ftp" is not allowed/);
      });
    });
  });

  it('an archive with ../ or absolute entries is never unpacked: nothing lands outside the task directory', async () => {
    await withAllocDir(async (f) => {
      // tar refuses to write such names itself; build the archive with --transform from a
      // harmless file, so its entries are "../../../escaped" and "/abs-escaped".
      const staging = join(f.root, 'staging');
      await mkdir(staging);
      await writeFile(join(staging, 'payload'), 'payload');
      const archive = join(f.taskDir, 'local', 'evil.tar.gz');
      execFileSync('tar', ['-czf', archive, '-C', staging, '--transform', 's,^payload$,../../../escaped,', 'payload', '--transform', 's,^payload$,/abs-escaped,', '-P', 'payload']);
      const listing = execFileSync('tar', ['-tzf', archive, '-P'], { encoding: 'utf8' });
      assert.match(listing, /\.\.\/\.\.\/\.\.\/escaped/);
      const outsideBefore = await filesBelow(f.root);
      await new ArtifactHook().prestart(artifactRequest([{ GetterSource: 'local/evil.tar.gz', RelativeDest: 'tmp/' }]), f.prep);
      assert.deepEqual(await readdir(join(f.taskDir, 'tmp')), ['evil.tar.gz'], 'the archive is placed as it is');
      const outsideAfter = await filesBelow(f.root);
      assert.deepEqual(outsideAfter.filter((p) => !outsideBefore.includes(p)), [relative(f.root, join(f.taskDir, 'tmp', 'evil.tar.gz'))]);
    });
  });
});
