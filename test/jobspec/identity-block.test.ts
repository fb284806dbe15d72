/**
 * A task's `identity` blocks (Nomad 1.7+): the default one and named ones, from HCL and from
 * the API's JSON (Task.Identity / Task.Identities), with Nomad's defaults and checks. The
 * fixture is shaped like the example `nomad job init` writes, which Caravan refused with
 * `unknown block "identity"`.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JobspecParseError, loadJobFile, parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { validateJob } from '../../src/structs/job-validate.js';
import { taskIdentities } from '../../src/structs/workload-identity.js';
import { tasksUpdated } from '../../src/scheduler/tasks-updated.js';
import { repoPath } from './repo-root.js';

const job = (identity: string): string => `job "j" {
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/true"
      }
${identity}
    }
  }
}`;

test('the job-init-shaped fixture parses: default identity in env and file, a named one with ttl and signal', async () => {
  const j = await loadJobFile(repoPath('test/fixtures/jobspecs/job-init-identity.hcl'));
  const t = j.TaskGroups[0]!.Tasks[0]!;
  assert.deepEqual(t.Identity, { Name: 'default', Audience: ['nomadproject.io'], ChangeMode: '', ChangeSignal: '', Env: true, File: true, Filepath: '', TTL: 0 });
  assert.deepEqual(t.Identities, [
    { Name: 'reporting', Audience: ['reports.example.com'], ChangeMode: 'signal', ChangeSignal: 'SIGHUP', Env: false, File: true, Filepath: '', TTL: 3600 * 1e9 },
  ]);
});

test('a task without identity blocks keeps no Identity field, and is signed Nomad\'s default identity', async () => {
  const j = canonicalizeJob(await parseJobspec(job('')));
  const t = j.TaskGroups[0]!.Tasks[0]!;
  assert.equal(t.Identity, undefined);
  assert.deepEqual(taskIdentities(t).map((i) => [i.Name, i.Audience, i.Env, i.File]), [['default', ['nomadproject.io'], false, false]]);
});

test('API JSON: Identity and Identities round-trip, TTL in nanoseconds, Env and File as booleans', async () => {
  const once = canonicalizeJob(await parseJobspec(job('      identity {\n        env = true\n      }\n      identity {\n        name = "vault"\n        aud = ["vault.io"]\n        ttl = "30m"\n      }')));
  const twice = canonicalizeJob(await parseJobspec(JSON.stringify({ Job: once })));
  assert.deepEqual(twice.TaskGroups[0]!.Tasks[0]!.Identity, once.TaskGroups[0]!.Tasks[0]!.Identity);
  assert.deepEqual(twice.TaskGroups[0]!.Tasks[0]!.Identities, once.TaskGroups[0]!.Tasks[0]!.Identities);
  assert.equal(twice.TaskGroups[0]!.Tasks[0]!.Identities![0]!.TTL, 30 * 60 * 1e9);
});

test('API JSON: a mistyped identity field is named', async () => {
  const j = canonicalizeJob(await parseJobspec(job('')));
  const bad = JSON.parse(JSON.stringify({ Job: j })) as { Job: { TaskGroups: { Tasks: Record<string, unknown>[] }[] } };
  bad.Job.TaskGroups[0]!.Tasks[0]!['Identity'] = { Env: 'yes' };
  await assert.rejects(parseJobspec(JSON.stringify(bad)), (e: unknown) => e instanceof JobspecParseError && /Env must be a boolean/.test(e.message));
});

const rows: { name: string; block: string; problem: RegExp }[] = [
  { name: 'two unnamed blocks', block: '      identity {\n        env = true\n      }\n      identity {\n        file = true\n      }', problem: /more than one identity is named "default"/ },
  { name: 'a bad change_mode', block: '      identity {\n        change_mode = "reboot"\n      }', problem: /change_mode must be one of noop, restart, signal/ },
  { name: 'signal without change_signal', block: '      identity {\n        change_mode = "signal"\n      }', problem: /change_signal is required/ },
  { name: 'a filepath escaping the task dir', block: '      identity {\n        file = true\n        filepath = "../../etc/x"\n      }', problem: /filepath must stay inside the task directory/ },
  { name: 'a bad name', block: '      identity {\n        name = "a b"\n      }', problem: /name must be 1 to 128 letters/ },
  { name: 'an unknown attribute', block: '      identity {\n        audience = ["x"]\n      }', problem: /audience/ },
];
for (const row of rows) {
  test(`identity: ${row.name} is refused with its field`, async () => {
    let problems: string[];
    try {
      problems = validateJob(canonicalizeJob(await parseJobspec(job(row.block)))).map((p) => `${p.path}: ${p.message}`);
    } catch (e) {
      assert.ok(e instanceof JobspecParseError);
      problems = [e.message];
    }
    assert.ok(problems.some((p) => row.problem.test(p)), problems.join('\n'));
  });
}

test('changing an identity replaces the allocation (a destructive update, as Nomad)', async () => {
  const a = canonicalizeJob(await parseJobspec(job('')));
  const b = canonicalizeJob(await parseJobspec(job('      identity {\n        env = true\n      }')));
  assert.equal(tasksUpdated(a, b, 'g'), true);
  assert.equal(tasksUpdated(a, canonicalizeJob(await parseJobspec(job(''))), 'g'), false);
});
