/**
 * The fault suite's short version (bench/faults; the full one is `npm run bench:faults`): three
 * etcd restarts and one kill -9 of the leader under the recorded workload, with a running job and
 * a rolling deployment. Asserts the history's checks, never timings: nothing acknowledged lost,
 * no divergent server, no linearizability violation, no two leaders at once, no crash, tasks
 * neither lost nor doubled. The seed is printed for a replay.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { runFaultSuite } from '../../bench/faults/fault-suite.js';

test('fault suite (short): etcd restarts and a leader kill lose, diverge, double and crash nothing', { timeout: 300_000 }, async (t) => {
  const seed = Number(process.env['FAULT_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
  t.diagnostic(`seed ${seed} (FAULT_SEED=${seed} replays the schedule)`);
  const r = await runFaultSuite({ seed, etcdRestarts: 3, leaderKills: 1, followerKills: 0, clientKills: 0, leaderPauses: 0, partitions: 0 });
  const at = `seed ${seed}`;
  assert.ok(r.history.acked > 0, `${at}: the workload wrote`);
  assert.ok(r.history.leaderClaims > 0, `${at}: leaders were seen with their term`);
  assert.deepEqual(r.crashes.map((c) => `${c.name}: ${c.output}`), [], `${at}: crashes`);
  assert.deepEqual(r.lost, [], `${at}: lost writes`);
  assert.deepEqual(r.divergent, [], `${at}: divergent keys`);
  assert.deepEqual(r.linearizability.violations, [], `${at}: linearizability`);
  assert.deepEqual(r.leaderConflicts.map((c) => c.why), [], `${at}: two leaders`);
  assert.equal(r.tasks?.lost, 0, `${at}: tasks lost (${JSON.stringify(r.tasks)})`);
  assert.equal(r.tasks?.doubled, 0, `${at}: tasks doubled (${JSON.stringify(r.tasks)})`);
  assert.deepEqual(r.rounds.filter((x) => x.recoverMs === null).map((x) => x.kind), [], `${at}: every fault recovered`);
});
