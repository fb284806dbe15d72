/**
 * A job file is a program since HCL2 expressions (issue 31): one sent to PUT /v1/jobs/parse
 * must not take the server's CPU, memory or stack. Each bomb below is refused with a 400 that
 * says which bound it hit, and the agent (its heap capped well below what the bombs would
 * build) keeps answering. Bounds: expression nesting, an evaluation step budget that can()
 * and try() cannot swallow, range()'s 1024 values, collection and string sizes, the total
 * weight of values that share parts, the depth of locals chains, and a regex time budget
 * (JavaScript regexes backtrack where Go's RE2 does not).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api, startAgent } from '../integration/helpers/agent-process.js';

const HEAP_CAP_MB = 384;

const JOB = 'job "bomb" {\n  group "g" {\n    task "t" {\n      driver = "raw_exec"\n    }\n  }\n}\n';
const locals = (body: string): string => `locals {\n${body}\n}\n${JOB}`;

const BOMBS: { name: string; hcl: string; expect: RegExp }[] = [
  { name: 'deeply nested expression', hcl: locals(`  x = "\${${'['.repeat(2000)}1${']'.repeat(2000)}}"`), expect: /nested deeper than|Maximum call stack|syntax error/ },
  { name: 'nested for over range()', hcl: locals('  x = [for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]]'), expect: /exceeded its budget of \d+ steps/ },
  { name: 'the same hidden behind can()', hcl: locals('  x = can([for a in range(1000) : [for b in range(1000) : [for c in range(1000) : c]]])'), expect: /exceeded its budget/ },
  { name: 'range() of a trillion', hcl: locals('  x = range(0, 1e12)'), expect: /more than 1024 values/ },
  { name: 'setproduct explosion', hcl: locals('  r = range(1000)\n  x = setproduct(local.r, local.r, local.r)'), expect: /exceeds the limit of/ },
  { name: 'locals doubling through shared parts', hcl: locals(`${Array.from({ length: 60 }, (_, i) => `  l${i + 1} = [local.l${i}, local.l${i}]`).join('\n')}\n  l0 = "xxxxxxxx"\n  out = jsonencode(local.l60)`), expect: /weight \d+ exceeds the limit/ },
  { name: 'a long chain of locals', hcl: locals(`${Array.from({ length: 2000 }, (_, i) => `  c${i + 1} = local.c${i}`).join('\n')}\n  c0 = "x"`), expect: /refer to each other more than \d+ deep/ },
  { name: 'format width', hcl: locals('  x = format("%0999999999d", 1)'), expect: /width or precision over/ },
  { name: 'string growth', hcl: locals('  a = join("", [for i in range(1000) : format("%09999d", i)])'), expect: /(characters|weight \d+) exceeds the limit/ },
  { name: 'deeply nested JSON for jsondecode', hcl: locals(`  x = jsondecode("${'['.repeat(100_000)}${']'.repeat(100_000)}")`), expect: /JSON nested deeper than/ },
  { name: 'deeply nested YAML for yamldecode', hcl: locals(`  x = yamldecode("${'['.repeat(100_000)}${']'.repeat(100_000)}")`), expect: /nested too deeply/ },
  { name: 'catastrophic regex backtracking', hcl: locals(`  x = regex_replace("${'a'.repeat(40)}!", "(a+)+$", "x")`), expect: /regex time budget/ },
  { name: 'many backtracking regexes', hcl: locals(`  x = [for i in range(1000) : regex_replace("${'a'.repeat(26)}!", "(a|aa)+$", "x")]`), expect: /regex time budget/ },
];

test('HCL2 evaluation bombs are refused with the bound they hit, and the server keeps answering', async () => {
  const agent = await startAgent({ roleArgs: ['-server'], env: { NODE_OPTIONS: `--max-old-space-size=${HEAP_CAP_MB}` } });
  try {
    for (const bomb of BOMBS) {
      const res = await api(agent.address, 'POST', '/v1/jobs/parse', { JobHCL: bomb.hcl, Canonicalize: true });
      assert.equal(res.status, 400, `${bomb.name}: ${res.text.slice(0, 300)}`);
      assert.match(res.text, bomb.expect, bomb.name);
      const health = await api(agent.address, 'GET', '/v1/agent/health');
      assert.equal(health.status, 200, `the agent answers after: ${bomb.name}`);
    }
    // And an ordinary job still parses.
    const ok = await api(agent.address, 'POST', '/v1/jobs/parse', { JobHCL: locals('  n = max(1, 2)'), Canonicalize: true });
    assert.equal(ok.status, 200, ok.text);
  } finally {
    await agent.stop();
    await agent.cleanup();
  }
});
