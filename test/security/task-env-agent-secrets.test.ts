/**
 * A job author must not read the credentials the client agent itself runs with. The agent's
 * environment reaches a task's `${env.X}` interpolation (Nomad hands the host environment to the
 * task env builder for drivers without an image), but never the variables of the client's
 * env.denylist (VAULT_TOKEN, CONSUL_HTTP_TOKEN, the AWS keys …), as Nomad filters them
 * (SetHostEnvvars): a task that copies `${env.VAULT_TOKEN}` into its env or its arguments gets
 * the reference as written. The tokens are markers this test gives the agent it starts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { teardown } from '../integration/helpers/client-agent.js';
import { rawExecStdout } from './helpers/raw-exec-stdout.js';

test("a task's interpolation never reads the agent's denylisted credentials; other agent variables still resolve", async () => {
  const mark = (name: string): string => `${name}-${randomBytes(6).toString('hex')}`;
  const secrets = { VAULT_TOKEN: mark('vault'), CONSUL_HTTP_TOKEN: mark('consul'), AWS_SECRET_ACCESS_KEY: mark('aws') };
  const visible = mark('visible');
  const dataDir = await mkdtemp('/tmp/cv-');
  let agent: AgentProcess | undefined;
  try {
    agent = await startAgent({ roleArgs: ['-dev'], dataDir, env: { ...secrets, CV_REVIEW_VISIBLE: visible } });
    // The references go through every interpolated place a job author writes: the task's env
    // (bare and `env.` forms) and the driver's arguments. JSON, so no HCL parser touches them.
    const out = await rawExecStdout(agent.address, { A: '${env.VAULT_TOKEN}', B: '${CONSUL_HTTP_TOKEN}', V: '${env.CV_REVIEW_VISIBLE}' }, `printf '%s|%s|%s|%s|%s' "$A" "$B" "$V" "$1" "$VAULT_TOKEN"`, ['${env.AWS_SECRET_ACCESS_KEY}']);
    for (const [name, value] of Object.entries(secrets)) assert.ok(!out.includes(value), `${name} of the agent reached the task: ${out}`);
    assert.equal(out, `\${env.VAULT_TOKEN}|\${CONSUL_HTTP_TOKEN}|${visible}|\${env.AWS_SECRET_ACCESS_KEY}|`, 'a denied reference is left as written; an allowed one resolves');
  } finally {
    await teardown(agent, dataDir);
  }
});
