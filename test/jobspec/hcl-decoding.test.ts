import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JobspecParseError, parseJobspec } from '../../src/jobspec/index.js';
import { canonicalizeJob } from '../../src/structs/job-defaults.js';
import { parseDuration } from '../../src/structs/duration.js';

const wrap = (groupBody: string, jobBody = ''): string => `job "j" {
  ${jobBody}
  group "g" {
    ${groupBody}
    task "t" {
      driver = "raw_exec"
    }
  }
}`;

test('constraint shorthands become LTarget/RTarget/Operand as in Nomad', async () => {
  const draft = await parseJobspec(wrap('', `
  constraint { distinct_hosts = true }
  constraint {
    attribute = "\${attr.kernel.name}"
    value     = "linux"
  }
  constraint {
    attribute = "\${attr.os.version}"
    version   = ">= 20.04"
  }
  constraint {
    attribute = "\${node.unique.name}"
    regexp    = "^web-"
  }
  constraint {
    attribute = "\${meta.tags}"
    set_contains = "a,b"
  }
  constraint {
    attribute = "\${meta.rack}"
    operator  = "is_set"
  }
  constraint {
    distinct_property = "\${meta.rack}"
    value             = "2"
  }`));
  const job = canonicalizeJob(draft);
  assert.deepEqual(job.Constraints, [
    { LTarget: '', RTarget: 'true', Operand: 'distinct_hosts' },
    { LTarget: '${attr.kernel.name}', RTarget: 'linux', Operand: '=' },
    { LTarget: '${attr.os.version}', RTarget: '>= 20.04', Operand: 'version' },
    { LTarget: '${node.unique.name}', RTarget: '^web-', Operand: 'regexp' },
    { LTarget: '${meta.tags}', RTarget: 'a,b', Operand: 'set_contains' },
    { LTarget: '${meta.rack}', RTarget: '', Operand: 'is_set' },
    { LTarget: '${meta.rack}', RTarget: '2', Operand: 'distinct_property' },
  ]);
});

test('network ports: static → ReservedPorts, others → DynamicPorts, host_network default', async () => {
  const job = canonicalizeJob(await parseJobspec(wrap(`
    network {
      mode = "host"
      port "http" {
        static = 8080
        to     = 80
      }
      port "metrics" {}
    }`)));
  const net = job.TaskGroups[0]!.Networks![0]!;
  assert.deepEqual(net.ReservedPorts, [{ Label: 'http', Value: 8080, To: 80, HostNetwork: 'default' }]);
  assert.deepEqual(net.DynamicPorts, [{ Label: 'metrics', Value: 0, To: 0, HostNetwork: 'default' }]);
});

test('periodic, parameterized, meta, spread, affinity, ephemeral_disk, durations', async () => {
  const job = canonicalizeJob(await parseJobspec(`job "p" {
  type        = "batch"
  datacenters = ["dc1", "dc2"]
  node_pool   = "edge"
  all_at_once = true
  meta = { owner = "ops", level = 3 }
  periodic {
    crons     = ["0 * * * *", "30 * * * *"]
    time_zone = "Europe/Berlin"
    enabled   = false
  }
  group "g" {
    shutdown_delay = "1h30m"
    ephemeral_disk {
      size   = 500
      sticky = true
    }
    affinity {
      attribute = "\${node.datacenter}"
      value     = "dc1"
      weight    = 70
    }
    spread {
      attribute = "\${node.datacenter}"
      target "dc1" { percent = 60 }
      target "dc2" { percent = 40 }
    }
    task "t" {
      driver = "raw_exec"
      user   = "nobody"
      kill_signal = "SIGINT"
      lifecycle { hook = "prestart" }
      logs { disabled = true }
    }
  }
}`));
  assert.deepEqual(job.Datacenters, ['dc1', 'dc2']);
  assert.equal(job.NodePool, 'edge');
  assert.equal(job.AllAtOnce, true);
  assert.deepEqual(job.Meta, { owner: 'ops', level: '3' });
  assert.deepEqual(job.Periodic, {
    Enabled: false, Spec: '0 * * * *', Specs: ['0 * * * *', '30 * * * *'], SpecType: 'cron', ProhibitOverlap: false, TimeZone: 'Europe/Berlin',
  });
  const g = job.TaskGroups[0]!;
  assert.equal(g.ShutdownDelay, parseDuration('1h30m'));
  assert.deepEqual(g.EphemeralDisk, { Sticky: true, Migrate: false, SizeMB: 500 });
  assert.deepEqual(g.Affinities, [{ LTarget: '${node.datacenter}', RTarget: 'dc1', Operand: '=', Weight: 70 }]);
  assert.deepEqual(g.Spreads, [{ Attribute: '${node.datacenter}', Weight: 50, SpreadTarget: [{ Value: 'dc1', Percent: 60 }, { Value: 'dc2', Percent: 40 }] }]);
  const t = g.Tasks[0]!;
  assert.equal(t.User, 'nobody');
  assert.equal(t.KillSignal, 'SIGINT');
  assert.deepEqual(t.Lifecycle, { Hook: 'prestart', Sidecar: false });
  assert.equal(t.LogConfig.Disabled, true);
});

test('variables: default, -var, -var-file (HCL and JSON), locals, escapes', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'caravan-vars-'));
  writeFileSync(join(dir, 'a.hcl'), 'image = "from-hcl"\ncount = 4\n');
  writeFileSync(join(dir, 'b.json'), JSON.stringify({ image: 'from-json' }));
  const src = `variable "count" {
  type    = number
  default = 1
}
variable "image" {
  default = "default-image"
}
locals {
  label = "app-\${var.image}"
}
job "v" {
  group "g" {
    count = var.count
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/echo"
        args    = [var.image, local.label, "$\${NOMAD_TASK_NAME}", "\${NOMAD_ALLOC_ID}"]
      }
    }
  }
}`;
  const args = async (opts: Parameters<typeof parseJobspec>[1]): Promise<[number | undefined, unknown]> => {
    const d = await parseJobspec(src, opts);
    return [d.TaskGroups![0]!.Count, d.TaskGroups![0]!.Tasks![0]!.Config!.args];
  };
  assert.deepEqual(await args({}), [1, ['default-image', 'app-default-image', '${NOMAD_TASK_NAME}', '${NOMAD_ALLOC_ID}']]);
  assert.deepEqual((await args({ vars: ['count=5'] }))[0], 5);
  assert.deepEqual(await args({ varFiles: ['a.hcl'], cwd: dir }), [4, ['from-hcl', 'app-from-hcl', '${NOMAD_TASK_NAME}', '${NOMAD_ALLOC_ID}']]);
  assert.deepEqual((await args({ varFiles: ['a.hcl', 'b.json'], cwd: dir }))[1], ['from-json', 'app-from-json', '${NOMAD_TASK_NAME}', '${NOMAD_ALLOC_ID}']);
  assert.deepEqual((await args({ varFiles: ['a.hcl'], vars: ['image=cli'], cwd: dir }))[1], ['cli', 'app-cli', '${NOMAD_TASK_NAME}', '${NOMAD_ALLOC_ID}']);
  await assert.rejects(parseJobspec(src, { vars: ['count=many'] }), (e: unknown) => e instanceof JobspecParseError && /variable "count": value "many" is not a number/.test(e.message));
  await assert.rejects(parseJobspec(src, { vars: ['nope=1'] }), /undeclared variable "nope"/);
  await assert.rejects(parseJobspec(src, { vars: ['novalue'] }), /malformed -var "novalue"/);
});

test('task config keeps nested blocks as lists of maps', async () => {
  const draft = await parseJobspec(`job "c" {
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image = "redis:7"
        ports = ["db"]
        mount {
          type   = "bind"
          target = "/data"
        }
        labels = { a = "b" }
      }
    }
  }
}`);
  assert.deepEqual(draft.TaskGroups![0]!.Tasks![0]!.Config, {
    image: 'redis:7',
    ports: ['db'],
    mount: [{ type: 'bind', target: '/data' }],
    // An object attribute is a one-element list, as jobspec2 (HCL1's shape); the docker driver reads both.
    labels: [{ a: 'b' }],
  });
});

test('several problems are reported together', async () => {
  await assert.rejects(
    parseJobspec(`job "m" {
  group "g" {
    cuont = 2
    task "t" {
      driver = "raw_exec"
      resources { memroy = 10 }
    }
  }
}`, { filename: 'm.hcl' }),
    (e: unknown) => {
      assert.ok(e instanceof JobspecParseError);
      assert.deepEqual(e.problems.map((p) => [p.line, p.message]), [
        [3, 'unknown attribute "cuont". Did you mean "count"?'],
        [6, 'unknown attribute "memroy". Did you mean "memory"?'],
      ]);
      // In line order, each with Nomad's suggestion.
      assert.match(e.message, /^m\.hcl:3: job "m": group "g": unknown attribute "cuont". Did you mean "count"\?\nm\.hcl:6: job "m": group "g": task "t": resources: unknown attribute "memroy". Did you mean "memory"\?$/);
      return true;
    },
  );
});

test('a file without a job block is rejected', async () => {
  await assert.rejects(parseJobspec('variable "x" { default = 1 }\n'), /no job block found/);
});
