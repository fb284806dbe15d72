/**
 * A job file sent to the server must not make it read its own files (issue 31). HCL2's
 * filesystem functions (file, filebase64, fileset, fileexists, abspath, pathexpand, …) are
 * disabled on PUT /v1/jobs/parse, as Nomad disables them there: each attempt is a 400 naming
 * the function, the file's contents never appear, and try()/can() give no oracle of whether
 * a path exists. The file read for is one this test created, holding a marker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api, startAgent } from '../integration/helpers/agent-process.js';

const job = (meta: string): string =>
  `job "steal" {\n  meta {\n    ${meta}\n  }\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n    }\n  }\n}\n`;

test('the server parse never reads a host file through HCL2 filesystem functions', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-hcl-files-'));
  const secret = join(dir, 'secret.txt');
  const marker = 'marker-7c1f0a9e';
  await writeFile(secret, marker);
  const agent = await startAgent({ roleArgs: ['-server'] });
  try {
    const attempts: [string, string][] = [
      ['file', `a = file("${secret}")`],
      ['filebase64', `a = filebase64("${secret}")`],
      ['fileset', `a = jsonencode(fileset("${dir}", "*"))`],
      ['file', `a = file("../../../../../../..${secret}")`],
      ['fileexists', `a = fileexists("${secret}")`],
      ['abspath', `a = abspath(".")`],
      ['pathexpand', `a = pathexpand("~/.ssh/id_rsa")`],
      ['file', `a = yamldecode(file("${secret}"))`],
    ];
    for (const [fn, meta] of attempts) {
      const res = await api(agent.address, 'POST', '/v1/jobs/parse', { JobHCL: job(meta), Canonicalize: true });
      assert.equal(res.status, 400, `${meta}: ${res.text}`);
      assert.match(res.text, new RegExp(`filesystem function ${fn}\\(\\) is disabled`), meta);
      assert.ok(!res.text.includes(marker), `${meta}: the file's contents leaked`);
    }
    // No oracle: can() answers the same for a file that exists and one that does not.
    for (const path of [secret, join(dir, 'missing')]) {
      const res = await api<{ Meta: Record<string, string> }>(agent.address, 'POST', '/v1/jobs/parse', { JobHCL: job(`a = can(file("${path}"))`), Canonicalize: true });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.Meta.a, 'false');
    }
    // Variables given with the request are evaluated without file access too.
    const withVar = `variable "v" {\n  type = list(string)\n}\n${job('a = join(",", var.v)')}`;
    const res = await api(agent.address, 'POST', '/v1/jobs/parse', { JobHCL: withVar, Variables: `v = [file("${secret}")]` });
    assert.ok(!res.text.includes(marker), `variables: the file's contents leaked: ${res.text}`);
  } finally {
    await agent.stop();
    await agent.cleanup();
    await rm(dir, { recursive: true, force: true });
  }
});
