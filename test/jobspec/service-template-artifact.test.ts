import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { JobspecParseError, parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { validateJob } from '../../src/structs/job-validate.js';
import { parseDuration } from '../../src/structs/duration.js';

const d = parseDuration;

function job(taskBody: string, groupBody = ''): string {
  return `job "web" {
  group "api" {
    ${groupBody}
    task "srv" {
      driver = "raw_exec"
      config { command = "/bin/true" }
      ${taskBody}
    }
  }
}`;
}

async function problems(src: string): Promise<string> {
  try {
    await parseJobspec(src);
  } catch (err) {
    assert.ok(err instanceof JobspecParseError);
    return err.message;
  }
  assert.fail('expected a parse error');
}

describe('service blocks', () => {
  it('decode into api.Service with checks in ns and Nomad defaults', async () => {
    const j = canonicalizeJob(
      await parseJobspec(
        job(`service {
        port = "http"
        tags = ["a", "b"]
        canary_tags = ["c"]
        meta { team = "x" }
        check {
          type     = "http"
          path     = "/health"
          interval = "10s"
          timeout  = "2s"
          method   = "POST"
          header { Authorization = ["Basic x"] }
          initial_status = "passing"
          check_restart { limit = 3 }
        }
      }`, `service {
      name = "grp"
      provider = "nomad"
      port = 8080
    }`),
      ),
    );
    const g = j.TaskGroups[0]!;
    const s = g.Tasks[0]!.Services![0]!;
    assert.equal(s.Name, 'web-api-srv');
    assert.equal(s.PortLabel, 'http');
    assert.deepEqual(s.Tags, ['a', 'b']);
    assert.deepEqual(s.CanaryTags, ['c']);
    assert.equal(s.Provider, 'consul');
    assert.equal(s.AddressMode, 'auto');
    assert.equal(s.OnUpdate, 'require_healthy');
    assert.equal(s.TaskName, 'srv');
    assert.deepEqual(s.Meta, { team: 'x' });
    const c = s.Checks![0]!;
    assert.equal(c.Type, 'http');
    assert.equal(c.Path, '/health');
    assert.equal(c.Interval, d('10s'));
    assert.equal(c.Timeout, d('2s'));
    assert.equal(c.Method, 'POST');
    assert.deepEqual(c.Header, { Authorization: ['Basic x'] });
    assert.equal(c.InitialStatus, 'passing');
    assert.equal(c.Name, 'service: "web-api-srv" check');
    assert.deepEqual(c.CheckRestart, { Limit: 3, Grace: d('1s'), IgnoreWarnings: false });
    const gs = g.Services![0]!;
    assert.equal(gs.Name, 'grp');
    assert.equal(gs.Provider, 'nomad');
    assert.equal(gs.PortLabel, '8080');
    assert.equal(gs.TaskName, '');
    assert.equal(gs.Checks, null);
  });

  it('reject bad provider and check type, naming the field', async () => {
    const msg = await problems(job(`service {
        provider = "etcd"
        check {
          type = "ping"
          timeout = "1s"
        }
      }`));
    assert.match(msg, /"provider" must be one of "consul", "nomad", got "etcd"/);
    assert.match(msg, /"type" must be one of "http", "tcp", "script", "grpc", got "ping"/);
    const short = await problems(job(`service {
        check {
          type = "tcp"
          interval = "100ms"
          timeout = "bogus"
        }
      }`));
    assert.match(short, /"interval" must be at least 1s/);
    assert.match(short, /"timeout" must be a duration/);
    assert.match(await problems(job('service { colour = "red" }')), /service: unknown attribute "colour"/);
  });

  it('a check without a type, an http check without a path, a script check without a command: parsed as on Nomad, refused by validation', async () => {
    const parsed = canonicalizeJob(await parseJobspec(job(`service {
        name = "web"
        check {
          name     = "untyped"
          interval = "5s"
          timeout  = "1s"
        }
        check {
          name     = "no-path"
          type     = "http"
          interval = "5s"
          timeout  = "1s"
        }
        check {
          name     = "no-command"
          type     = "script"
          interval = "5s"
          timeout  = "1s"
        }
      }`)));
    const messages = validateJob(parsed).map((p) => `${p.path}: ${p.message}`).join('\n');
    assert.match(messages, /service "web": check "untyped": missing required value type/);
    assert.match(messages, /service "web": check "no-path": http type must have http path/);
    assert.match(messages, /service "web": check "no-command": script type must have a valid script path/);
  });
});

describe('check interval and timeout', () => {
  it('parse when missing, as on Nomad (jobspec2 service-check-restart.hcl), and validation names each', async () => {
    const parsed = canonicalizeJob(await parseJobspec(job(`service {
        name = "web"
        check {
          name = "tcp-probe"
          type = "tcp"
          port = "9001"
        }
      }`)));
    const messages = validateJob(parsed).map((p) => `${p.path}: ${p.message}`);
    assert.ok(messages.some((m) => m.includes('service "web": check "tcp-probe": missing required value interval')), JSON.stringify(messages));
    assert.ok(messages.some((m) => m.includes('service "web": check "tcp-probe": missing required value timeout')), JSON.stringify(messages));
  });

  it('validation also refuses a sub-second interval or timeout sent as API JSON, where the parser never ran', async () => {
    const parsed = canonicalizeJob(await parseJobspec(job(`service {
        name = "web"
        check {
          name     = "tcp-probe"
          type     = "tcp"
          port     = "9001"
          interval = "10s"
          timeout  = "2s"
        }
      }`)));
    const check = parsed.TaskGroups[0]!.Tasks[0]!.Services![0]!.Checks![0]!;
    assert.deepEqual(validateJob(parsed), []);
    check.Interval = 500_000_000;
    check.Timeout = 100_000_000;
    const messages = validateJob(parsed).map((p) => p.message);
    assert.ok(messages.includes('interval cannot be less than 1s'), JSON.stringify(messages));
    assert.ok(messages.includes('timeout cannot be less than 1s'), JSON.stringify(messages));
  });
});

describe('template blocks', () => {
  it('decode into api.Template with Canonicalize defaults', async () => {
    const j = canonicalizeJob(await parseJobspec(job(`template {
        data        = "hello {{ env \\"NOMAD_TASK_NAME\\" }}"
        destination = "local/out.txt"
      }`)));
    const t = j.TaskGroups[0]!.Tasks[0]!.Templates![0]!;
    assert.deepEqual(t, {
      SourcePath: '',
      DestPath: 'local/out.txt',
      EmbeddedTmpl: 'hello {{ env "NOMAD_TASK_NAME" }}',
      ChangeMode: 'restart',
      ChangeScript: null,
      ChangeSignal: '',
      Splay: d('5s'),
      Perms: '0644',
      Uid: null,
      Gid: null,
      LeftDelim: '{{',
      RightDelim: '}}',
      Envvars: false,
      VaultGrace: 0,
      Wait: null,
      ErrMissingKey: false,
      Once: false,
    });
  });

  it('keeps every set field: splay and wait in ns, delimiters, env, signal upper-cased', async () => {
    const j = canonicalizeJob(await parseJobspec(job(`template {
        source          = "local/in.tpl"
        destination     = "secrets/file.env"
        change_mode     = "signal"
        change_signal   = "sigusr1"
        splay           = "1m"
        perms           = "0600"
        left_delimiter  = "[["
        right_delimiter = "]]"
        env             = true
        error_on_missing_key = true
        wait {
          min = "2s"
          max = "10s"
        }
      }`)));
    const t = j.TaskGroups[0]!.Tasks[0]!.Templates![0]!;
    assert.equal(t.SourcePath, 'local/in.tpl');
    assert.equal(t.DestPath, 'secrets/file.env');
    assert.equal(t.ChangeMode, 'signal');
    assert.equal(t.ChangeSignal, 'SIGUSR1');
    assert.equal(t.Splay, d('1m'));
    assert.equal(t.Perms, '0600');
    assert.equal(t.LeftDelim, '[[');
    assert.equal(t.RightDelim, ']]');
    assert.equal(t.Envvars, true);
    assert.equal(t.ErrMissingKey, true);
    assert.deepEqual(t.Wait, { Min: d('2s'), Max: d('10s') });
  });

  it('reports a bad duration and perms by field at parse time', async () => {
    const msg = await problems(job(`template {
        data        = "x"
        destination = "local/x"
        splay       = "soon"
        perms       = "rw-r--r--"
      }`));
    assert.match(msg, /"splay" must be a duration/);
    assert.match(msg, /"perms" must be an octal mode/);
    assert.match(await problems(job('template {\n data = "x"\n destination = "local/x"\n wait {\n min = "5s"\n max = "1s"\n }\n }')), /wait "min" must not be greater than "max"/);
  });

  it('parses, as Nomad does, a template without destination or data and with a bad change_mode; validation names each', async () => {
    const cases: [string, RegExp][] = [
      ['template {\n data = "x"\n change_mode = "reload"\n }', /template\[0\]: must specify a destination/],
      ['template {\n data = "x"\n destination = "local/x"\n change_mode = "reload"\n }', /template\[0\]: invalid change mode "reload"/],
      ['template {\n destination = "local/x"\n }', /template\[0\]: must specify a source or embedded data/],
      ['template {\n wait {\n min = "5s"\n max = "60s"\n }\n }', /template\[0\]: must specify a destination/],
    ];
    for (const [body, want] of cases) {
      const parsed = canonicalizeJob(await parseJobspec(job(body)));
      const messages = validateJob(parsed).map((p) => `${p.path}: ${p.message}`).join('\n');
      assert.match(messages, want, body);
    }
    // Nomad's API canonicalization gives change_mode "signal" without a change_signal SIGHUP.
    const signalled = canonicalizeJob(await parseJobspec(job('template {\n data = "x"\n destination = "local/x"\n change_mode = "signal"\n }')));
    assert.equal(signalled.TaskGroups[0]!.Tasks[0]!.Templates![0]!.ChangeSignal, 'SIGHUP');
    assert.deepEqual(validateJob(signalled), []);
  });
});

describe('artifact blocks', () => {
  it('decode into api.TaskArtifact with defaults', async () => {
    const j = canonicalizeJob(await parseJobspec(job(`artifact {
        source = "https://example.com/app.tgz"
        options { checksum = "md5:abc" }
        headers { X-Token = "t" }
      }
      artifact {
        source = "file:///srv/config.json"
        mode   = "file"
      }`)));
    const [a, b] = j.TaskGroups[0]!.Tasks[0]!.Artifacts!;
    assert.deepEqual(a, {
      GetterSource: 'https://example.com/app.tgz',
      GetterOptions: { checksum: 'md5:abc' },
      GetterHeaders: { 'X-Token': 't' },
      GetterMode: 'any',
      GetterInsecure: false,
      RelativeDest: 'local/',
      Chown: false,
    });
    assert.equal(b!.GetterMode, 'file');
    assert.equal(b!.RelativeDest, 'local/config.json');
    assert.equal(b!.GetterOptions, null);
  });

  it('reports a missing source and a bad mode', async () => {
    const msg = await problems(job('artifact {\n destination = "local/x"\n mode = "tarball"\n }'));
    assert.match(msg, /artifact needs a "source"/);
    assert.match(msg, /"mode" must be one of "any", "file", "dir", got "tarball"/);
  });
});

describe('API JSON jobs', () => {
  it('canonicalize templates, services and artifacts given in API shape', async () => {
    const j = canonicalizeJob(
      await parseJobspec(
        JSON.stringify({
          Job: {
            ID: 'x',
            TaskGroups: [{ Name: 'g', Tasks: [{ Name: 't', Driver: 'raw_exec', Templates: [{ EmbeddedTmpl: 'a', DestPath: 'local/a', Splay: 1 }], Services: [{ PortLabel: 'p' }], Artifacts: [{ GetterSource: '/tmp/x' }] }] }],
          },
        }),
        { filename: 'job.json' },
      ),
    );
    const t = j.TaskGroups[0]!.Tasks[0]!;
    assert.equal(t.Templates![0]!.Splay, 1);
    assert.equal(t.Templates![0]!.Perms, '0644');
    assert.equal(t.Services![0]!.Name, 'x-g-t');
    assert.equal(t.Artifacts![0]!.RelativeDest, 'local/');
  });
});

describe('provider = "nomad" services, validated as Nomad', () => {
  it('refuses script checks, expose, ignore_warnings and driver-addressed checks, naming the service and check', async () => {
    const { validateJob } = await import('../../src/structs/job-validate.js');
    const j = canonicalizeJob(
      await parseJobspec(
        job(`service {
      name     = "web"
      provider = "nomad"
      check {
        name     = "s"
        type     = "script"
        command  = "/bin/true"
        interval = "5s"
        timeout  = "2s"
      }
      check {
        name         = "h"
        type         = "http"
        path         = "/"
        expose       = true
        address_mode = "driver"
        interval     = "5s"
        timeout      = "2s"
        check_restart {
          limit           = 1
          ignore_warnings = true
        }
      }
    }`),
      ),
    );
    const msgs = validateJob(j).map((p) => `${p.path}: ${p.message}`);
    assert.ok(msgs.some((m) => m.includes('service "web": check "s"') && m.includes('must be one of "tcp", "http"')), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.includes('check "h"') && m.includes('expose may only be set for Consul service checks')), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.includes('ignore_warnings on check_restart')), msgs.join('\n'));
    assert.ok(msgs.some((m) => m.includes('address_mode = driver')), msgs.join('\n'));
    // The same checks on a Consul service are not refused here.
    const consul = canonicalizeJob(await parseJobspec(job('service {\n name = "web"\n check {\n type = "script"\n command = "/bin/true"\n interval = "5s"\n timeout = "2s"\n }\n }')));
    assert.deepEqual(validateJob(consul).filter((p) => p.message.includes('tcp')), []);
  });
});
