/** The artifact hook: local sources inside the allocation, http(s) downloads, and the source classification. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ArtifactHook } from '../../../src/client/taskrunner/hooks/artifact-hook.js';
import { parseArtifactSource } from '../../../src/client/taskrunner/getter/artifact-source.js';
import { TaskSetupError } from '../../../src/client/taskrunner/task-setup-error.js';
import { artifactRequest, withAllocDir, withHttpServer } from './artifact-fixture.js';

describe('parseArtifactSource', () => {
  it('takes http(s) URLs and paths inside the task or shared alloc directory', () => {
    assert.deepEqual(parseArtifactSource('https://example.com/a/app.tgz'), { kind: 'url', url: new URL('https://example.com/a/app.tgz') });
    assert.equal((parseArtifactSource('http::http://example.com/x') as { url: URL }).url.href, 'http://example.com/x');
    assert.deepEqual(parseArtifactSource('local/app.conf'), { kind: 'local', root: 'task', rel: 'local/app.conf' });
    assert.deepEqual(parseArtifactSource('./local/../tmp/x'), { kind: 'local', root: 'task', rel: 'tmp/x' });
    assert.deepEqual(parseArtifactSource('../alloc/data/app.conf'), { kind: 'local', root: 'alloc', rel: 'data/app.conf' });
  });

  it('refuses every other scheme and forced getter, naming the source', () => {
    for (const [source, reason] of [
      ['file:///etc/passwd', /file:\/\/ URLs/],
      ['FILE:///etc/passwd', /file:\/\/ URLs/],
      ['file:/etc/passwd', /file:\/\/ URLs/],
      ['ftp://example.com/x', /scheme "ftp" is not supported/],
      ['git::https://github.com/x/y', /getter "git" is not supported/],
      ['s3::https://bucket.s3.amazonaws.com/x', /getter "s3" is not supported/],
      ['/etc/passwd', /absolute host paths are refused/],
      ['~/.ssh/id_rsa', /absolute host paths are refused/],
      ['../other-task/secrets/token', /leaves the task directory/],
      ['../../../etc/passwd', /leaves the task directory/],
      ['', /source must be specified/],
    ] as const) {
      assert.throws(() => parseArtifactSource(source), (e: Error & { code?: string }) => {
        assert.equal(e.code, 'ARTIFACT_SOURCE_REFUSED', source);
        assert.ok(e.message.includes(JSON.stringify(source)), `${e.message} names ${source}`);
        assert.match(e.message, reason);
        return true;
      });
    }
  });
});

describe('ArtifactHook local sources', () => {
  it('copies a file in file mode, into the destination directory in any mode, and a directory', async () => {
    await withAllocDir(async ({ taskDir, allocDir, prep }) => {
      await writeFile(join(taskDir, 'local', 'app.conf'), 'conf');
      await mkdir(join(taskDir, 'local', 'tree', 'sub'), { recursive: true });
      await writeFile(join(taskDir, 'local', 'tree', 'sub', 'x'), 'x');
      await writeFile(join(allocDir, 'alloc', 'data', 'shared.txt'), 'shared');
      await new ArtifactHook().prestart(
        artifactRequest([
          { GetterSource: 'local/app.conf', GetterMode: 'file', RelativeDest: 'local/renamed.conf' },
          { GetterSource: 'local/app.conf', RelativeDest: 'tmp/' },
          { GetterSource: 'local/tree', RelativeDest: 'local/copy' },
          { GetterSource: '../alloc/data/shared.txt' },
        ]),
        prep,
      );
      assert.equal(await readFile(join(taskDir, 'local', 'renamed.conf'), 'utf8'), 'conf');
      assert.equal(await readFile(join(taskDir, 'tmp', 'app.conf'), 'utf8'), 'conf');
      assert.equal(await readFile(join(taskDir, 'local', 'copy', 'sub', 'x'), 'utf8'), 'x');
      assert.equal(await readFile(join(taskDir, 'local', 'shared.txt'), 'utf8'), 'shared');
    });
  });

  it('checks the mode against what the source is, and refuses copying a directory into itself', async () => {
    await withAllocDir(async ({ taskDir, prep }) => {
      await writeFile(join(taskDir, 'local', 'f'), 'f');
      for (const [a, re] of [
        [{ GetterSource: 'local', GetterMode: 'file', RelativeDest: 'tmp/x' }, /is a directory but mode is "file"/],
        [{ GetterSource: 'local/f', GetterMode: 'dir', RelativeDest: 'tmp/' }, /is not a directory but mode is "dir"/],
        [{ GetterSource: 'local', RelativeDest: 'local/again' }, /is inside the source/],
        [{ GetterSource: 'local/missing' }, /not found/],
      ] as const) {
        await assert.rejects(new ArtifactHook().prestart(artifactRequest([a]), prep), (e: unknown) => e instanceof TaskSetupError && re.test(e.message));
      }
    });
  });
});

describe('ArtifactHook http(s) sources', () => {
  it('downloads into the destination, with headers, a verified checksum and followed redirects', async () => {
    const body = 'binary-content';
    const sha = createHash('sha256').update(body).digest('hex');
    const seenHeaders: string[] = [];
    await withHttpServer((req, res) => {
      if (req.url === '/old/app.bin') {
        res.writeHead(302, { location: '/files/app.bin' }).end();
        return;
      }
      seenHeaders.push(String(req.headers['x-team'] ?? ''));
      res.writeHead(200).end(body);
    }, async (base) => {
      await withAllocDir(async ({ taskDir, prep }) => {
        await new ArtifactHook().prestart(
          artifactRequest([
            { GetterSource: `${base}/old/app.bin`, GetterHeaders: { 'X-Team': 'a' }, GetterOptions: { checksum: `sha256:${sha}` } },
            { GetterSource: `${base}/files/app.bin`, GetterMode: 'file', RelativeDest: 'local/bin/renamed' },
          ]),
          prep,
        );
        assert.equal(await readFile(join(taskDir, 'local', 'app.bin'), 'utf8'), body);
        assert.equal(await readFile(join(taskDir, 'local', 'bin', 'renamed'), 'utf8'), body);
        assert.equal((await stat(join(taskDir, 'local', 'app.bin'))).mode & 0o777, 0o644);
        assert.deepEqual(seenHeaders, ['a', ''], 'the headers reach the redirect target');
      });
    });
  });

  it('fails on a bad status, a checksum mismatch and a URL naming no file', async () => {
    await withHttpServer((req, res) => {
      if (req.url === '/missing') res.writeHead(404).end();
      else res.writeHead(200).end('data');
    }, async (base) => {
      await withAllocDir(async ({ prep }) => {
        for (const [a, re] of [
          [{ GetterSource: `${base}/missing` }, /bad response code: 404/],
          [{ GetterSource: `${base}/f`, GetterOptions: { checksum: 'sha256:00' } }, /checksums did not match/],
          [{ GetterSource: `${base}/f`, GetterOptions: { checksum: 'crc:00' } }, /checksum must be "type:hex"/],
          [{ GetterSource: `${base}/` }, /names no file/],
        ] as const) {
          await assert.rejects(new ArtifactHook().prestart(artifactRequest([a]), prep), (e: unknown) => e instanceof TaskSetupError && re.test(e.message) && e.message.includes(JSON.stringify(a.GetterSource)));
        }
      });
    });
  });
});
