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
import { api, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { jobAllocs, teardown, waitFor } from '../integration/helpers/client-agent.js';

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
    const put = await api(agent.address, 'PUT', '/v1/jobs', {
      Job: {
        ID: 'steal',
        Name: 'steal',
        Type: 'batch',
        Datacenters: ['*'],
        TaskGroups: [
          {
            Name: 'g',
            Count: 1,
            RestartPolicy: { Attempts: 0, Mode: 'fail' },
            Tasks: [
              {
                Name: 't',
                Driver: 'raw_exec',
                Env: { A: '${env.VAULT_TOKEN}', B: '${CONSUL_HTTP_TOKEN}', V: '${env.CV_REVIEW_VISIBLE}' },
                Config: { command: '/bin/sh', args: ['-c', `printf '%s|%s|%s|%s|%s' "$A" "$B" "$V" "$1" "$VAULT_TOKEN"`, 'sh', '${env.AWS_SECRET_ACCESS_KEY}'] },
                Resources: { CPU: 20, MemoryMB: 16 },
              },
            ],
          },
        ],
      },
    });
    assert.equal(put.status, 200, put.text);
    const address = agent.address;
    const alloc = await waitFor('the task to finish', async () => (await jobAllocs(address, 'steal')).find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'));
    assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(alloc.TaskStates));
    const out = (await api(address, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text;
    for (const [name, value] of Object.entries(secrets)) assert.ok(!out.includes(value), `${name} of the agent reached the task: ${out}`);
    assert.equal(out, `\${env.VAULT_TOKEN}|\${CONSUL_HTTP_TOKEN}|${visible}|\${env.AWS_SECRET_ACCESS_KEY}|`, 'a denied reference is left as written; an allowed one resolves');
  } finally {
    await teardown(agent, dataDir);
  }
});
