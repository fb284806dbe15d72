import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { lstat, mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TaskHookRequest, TaskPrep } from '../../../src/client/taskrunner/interfaces.js';
import { TemplateHook } from '../../../src/client/taskrunner/hooks/template-hook.js';
import { TaskSetupError } from '../../../src/client/taskrunner/task-setup-error.js';
import { canonicalizeTemplate, type Template } from '../../../src/structs/template.js';

async function withDirs(fn: (prep: TaskPrep, dir: string) => Promise<void>): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-tmpl-'));
  const prep: TaskPrep = {
    dirs: { dir, localDir: join(dir, 'local'), secretsDir: join(dir, 'secrets'), tmpDir: join(dir, 'tmp'), sharedAllocDir: join(dir, 'alloc'), logDir: join(dir, 'alloc', 'logs') },
    env: { NOMAD_ALLOC_ID: 'alloc-1', NOMAD_TASK_NAME: 't' },
    driverConfig: {},
    logs: null,
  };
  try {
    await fn(prep, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function request(templates: Partial<Template>[]): TaskHookRequest {
  return {
    task: { Name: 't', Templates: templates.map(canonicalizeTemplate) },
    alloc: { ID: 'alloc-1', Namespace: 'default', Job: null },
    node: { region: 'global' },
    signal: new AbortController().signal,
    lifecycle: { restart: async () => {}, signal: async () => {}, emit: () => {} },
  } as unknown as TaskHookRequest;
}

describe('TemplateHook', () => {
  it('renders embedded data to the destination with perms and the task env', async () => {
    await withDirs(async (prep, dir) => {
      const out = await new TemplateHook().prestart(request([{ EmbeddedTmpl: 'alloc={{ env "NOMAD_ALLOC_ID" }}\n', DestPath: 'local/config.txt', Perms: '0600' }]), prep);
      assert.equal(await readFile(join(dir, 'local', 'config.txt'), 'utf8'), 'alloc=alloc-1\n');
      assert.equal((await stat(join(dir, 'local', 'config.txt'))).mode & 0o777, 0o600);
      assert.deepEqual(out.env, prep.env);
    });
  });

  it('renders a source file from the task dir and adds env templates to the environment', async () => {
    await withDirs(async (prep, dir) => {
      await mkdir(join(dir, 'local'), { recursive: true });
      await writeFile(join(dir, 'local', 'in.tpl'), 'GREETING=hi [[ env "NOMAD_TASK_NAME" ]]\n');
      const out = await new TemplateHook().prestart(
        request([
          { SourcePath: 'local/in.tpl', DestPath: 'secrets/file.env', Envvars: true, LeftDelim: '[[', RightDelim: ']]' },
          { EmbeddedTmpl: 'copy={{ env "GREETING" }}', DestPath: 'local/copy' },
        ]),
        prep,
      );
      assert.equal(out.env?.GREETING, 'hi t');
      assert.equal(out.env?.NOMAD_ALLOC_ID, 'alloc-1');
      assert.equal(await readFile(join(dir, 'local', 'copy'), 'utf8'), 'copy=hi t');
    });
  });

  it('fails setup with "Template failed" for unsupported functions and escaping paths', async () => {
    await withDirs(async (prep) => {
      await assert.rejects(new TemplateHook().prestart(request([{ EmbeddedTmpl: '{{ key "x" }}', DestPath: 'local/x' }]), prep), (e: unknown) => {
        assert.ok(e instanceof TaskSetupError);
        assert.equal(e.message, 'Template failed: unsupported function "key"');
        return true;
      });
      await assert.rejects(new TemplateHook().prestart(request([{ EmbeddedTmpl: 'x', DestPath: '../../etc/x' }]), prep), /Template failed: destination "..\/..\/etc\/x" escapes the task directory/);
    });
  });
});

describe('templates never write or read through a link the task planted (issue 17 item 12)', () => {
  it('a destination that is a symlink to a host file is replaced, the host file untouched', async () => {
    await withDirs(async (prep, dir) => {
      const host = join(dir, '..', `host-${process.pid}-${Date.now()}`);
      await writeFile(host, 'host file\n');
      try {
        await mkdir(join(dir, 'local'), { recursive: true });
        await symlink(host, join(dir, 'local', 'out.txt'));
        await new TemplateHook().prestart(request([{ EmbeddedTmpl: 'rendered\n', DestPath: 'local/out.txt', Perms: '0600' }]), prep);
        assert.equal(await readFile(host, 'utf8'), 'host file\n');
        assert.equal((await stat(host)).mode & 0o777, 0o644);
        assert.ok((await lstat(join(dir, 'local', 'out.txt'))).isFile());
        assert.equal(await readFile(join(dir, 'local', 'out.txt'), 'utf8'), 'rendered\n');
      } finally {
        await rm(host, { force: true });
      }
    });
  });

  it('a destination directory that is a symlink to a host directory is refused', async () => {
    await withDirs(async (prep, dir) => {
      const host = await mkdtemp(join(tmpdir(), 'caravan-hostdir-'));
      try {
        await mkdir(join(dir, 'local'), { recursive: true });
        await symlink(host, join(dir, 'local', 'conf'));
        await assert.rejects(
          new TemplateHook().prestart(request([{ EmbeddedTmpl: 'x', DestPath: 'local/conf/app.ini' }]), prep),
          (err: unknown) => err instanceof TaskSetupError && /symlink/.test(err.message),
        );
        assert.deepEqual(await readdir(host), []);
      } finally {
        await rm(host, { recursive: true, force: true });
      }
    });
  });

  it('a source that is a symlink to a host file is refused', async () => {
    await withDirs(async (prep, dir) => {
      await mkdir(join(dir, 'local'), { recursive: true });
      await symlink('/etc/hostname', join(dir, 'local', 'src.tpl'));
      await assert.rejects(
        new TemplateHook().prestart(request([{ SourcePath: 'local/src.tpl', DestPath: 'local/out' }]), prep),
        (err: unknown) => err instanceof TaskSetupError && /outside/.test(err.message),
      );
    });
  });
});
