/**
 * Nomad's heartbeat settings in the server block (heartbeat_grace, min_heartbeat_ttl,
 * max_heartbeats_per_second, failover_heartbeat_ttl): read in the server's terms, merged across
 * files, and refused with the field named when out of bounds.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentConfigError } from '../../src/agent/agent-config.js';
import { buildAgentConfig } from '../../src/cli/commands/agent.js';

test('server heartbeat settings are read and merged; bad ones name the field', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'caravan-hb-cfg-'));
  try {
    const a = join(dir, 'a.hcl');
    const b = join(dir, 'b.json');
    await writeFile(a, 'server {\n  enabled = true\n  heartbeat_grace = "30s"\n  min_heartbeat_ttl = "20s"\n  max_heartbeats_per_second = 100.5\n}\n');
    await writeFile(b, JSON.stringify({ server: { failover_heartbeat_ttl: '10m' } }));
    const c = await buildAgentConfig({ config: [a, b], dataDir: dir });
    assert.deepEqual(c.server.heartbeat, { graceMs: 30_000, minTtlMs: 20_000, maxHeartbeatsPerSecond: 100.5, failoverTtlMs: 600_000 });
    const none = await buildAgentConfig({ dev: true });
    assert.equal(none.server.heartbeat, undefined, 'unset: the server keeps its defaults');

    const rows = [
      { text: 'max_heartbeats_per_second = 0', field: 'server.max_heartbeats_per_second' },
      { text: 'max_heartbeats_per_second = "many"', field: 'server.max_heartbeats_per_second' },
      { text: 'min_heartbeat_ttl = "0s"', field: 'server.min_heartbeat_ttl' },
      { text: 'failover_heartbeat_ttl = "soon"', field: 'server.failover_heartbeat_ttl' },
      { text: 'heartbeat_grace = "-5s"', field: 'server.heartbeat_grace' },
    ];
    for (const r of rows) {
      const f = join(dir, 'bad.hcl');
      await writeFile(f, `server {\n  enabled = true\n  ${r.text}\n}\n`);
      await assert.rejects(buildAgentConfig({ config: [f], dataDir: dir }), (err: unknown) => err instanceof AgentConfigError && err.field === r.field, r.text);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
