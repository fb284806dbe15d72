/**
 * Templates whose `source` or `destination` leaves the task directory — by `../`, by `../`
 * after a subdirectory, by an absolute path, by an absolute path that dips back through `..` —
 * the eight variants the hostile review found held (issue 26, "Held"), kept as a test with a
 * real agent. Each is refused (at registration, or by the task's setup, naming the field), no
 * host file is read into the allocation, and none is written or created. The "host" files are
 * files this test creates outside the agent's data directory.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import type { Allocation } from '../../src/structs/index.js';
import { api, type AgentProcess } from '../integration/helpers/agent-process.js';
import { jobAllocs, startDevAgent, teardown, waitFor } from '../integration/helpers/client-agent.js';

const SECRET = 'root:$6$template-host-secret:19000:0:99999:7:::';
/** Enough `../` to climb from any task directory to `/`. */
const UP = '../'.repeat(24);

let agent: AgentProcess | undefined;
let dataDir: string;
let hostDir: string;

before(async () => {
  dataDir = await mkdtemp('/tmp/cv-');
  hostDir = await mkdtemp('/tmp/cv-host-');
  await writeFile(join(hostDir, 'shadow'), `${SECRET}\n`, { mode: 0o600 });
  await writeFile(join(hostDir, 'existing'), 'host file\n');
  agent = await startDevAgent({ dataDir });
});

after(async () => {
  await teardown(agent, dataDir);
  await rm(hostDir, { recursive: true, force: true });
});

/** The variants: [name, field, the template's source/destination lines]. */
function variants(): Array<[string, 'source' | 'destination', string]> {
  const h = hostDir.slice(1);
  const dest = (d: string) => `data = "pwned"\n        destination = ${JSON.stringify(d)}`;
  const src = (s: string) => `source = ${JSON.stringify(s)}\n        destination = "local/out"`;
  return [
    ['dest-up', 'destination', dest(`${UP}${h}/created-up`)],
    ['dest-sub-up', 'destination', dest(`local/${UP}${h}/created-sub-up`)],
    ['dest-abs', 'destination', dest(`${hostDir}/existing`)],
    ['dest-abs-dotdot', 'destination', dest(`${hostDir}/nowhere/../created-abs-dotdot`)],
    ['src-up', 'source', src(`${UP}${h}/shadow`)],
    ['src-sub-up', 'source', src(`local/${UP}${h}/shadow`)],
    ['src-abs', 'source', src(`${hostDir}/shadow`)],
    ['src-abs-dotdot', 'source', src(`${hostDir}/nowhere/../shadow`)],
  ];
}

function job(id: string, template: string): string {
  return `
job "${id}" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sh"
        args    = ["-c", "cat local/out 2>/dev/null; echo ran"]
      }
      template {
        ${template}
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;
}

/** Every regular file below `dir` that holds the secret, relative to `dir`. */
async function filesHoldingSecret(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const ent of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!ent.isFile()) continue;
    const p = join(ent.parentPath, ent.name);
    const text = await readFile(p, 'utf8').catch(() => '');
    if (text.includes('template-host-secret')) out.push(relative(dir, p));
  }
  return out;
}

test('templates with ../ or absolute source and destination are refused, and no host file is read or written', { timeout: 120_000 }, async () => {
  const a = agent!;
  const registered: Array<[string, 'source' | 'destination']> = [];
  for (const [name, field, template] of variants()) {
    const parsed = await api(a.address, 'POST', '/v1/jobs/parse', { JobHCL: job(name, template), Canonicalize: true });
    assert.equal(parsed.status, 200, parsed.text);
    const reg = await api(a.address, 'PUT', '/v1/jobs', { Job: parsed.body });
    if (reg.status === 200) registered.push([name, field]);
    else {
      // Refused at registration: a 400 naming the template's field.
      assert.equal(reg.status, 400, `${name}: ${reg.text}`);
      assert.match(reg.text, new RegExp(field), name);
    }
  }
  for (const [name, field] of registered) {
    const stub = await waitFor(`${name} to end`, async () => (await jobAllocs(a.address, name)).find((x) => x.ClientStatus === 'failed' || x.ClientStatus === 'complete'), 60_000);
    const alloc = (await api<Allocation>(a.address, 'GET', `/v1/allocation/${stub.ID}`)).body;
    const events = alloc.TaskStates?.['t']?.Events ?? [];
    assert.equal(stub.ClientStatus, 'failed', `${name} ran: ${JSON.stringify(events.map((e) => e.DisplayMessage))}`);
    const failure = events.find((e) => e.Type === 'Setup Failure');
    assert.ok(failure, `${name}: ${JSON.stringify(events.map((e) => e.Type))}`);
    assert.match(failure.DisplayMessage, new RegExp(`^Template failed: ${field} ".*" escapes the task directory$`), name);
    // The refusal names the path the job gave, not where the agent keeps its allocations.
    assert.ok(!failure.DisplayMessage.includes(dataDir), `${name}: ${failure.DisplayMessage}`);
    assert.ok(!events.some((e) => e.Type === 'Started'), `${name}: the task started`);
  }
  assert.deepEqual((await readdir(hostDir)).sort(), ['existing', 'shadow'], 'nothing was created beside the host files');
  assert.equal(await readFile(join(hostDir, 'existing'), 'utf8'), 'host file\n', 'the host file was not overwritten');
  assert.deepEqual(await filesHoldingSecret(join(dataDir, 'client')), [], 'no host file was read into an allocation');
});
