/**
 * Runs one raw_exec batch task (`/bin/sh -c script sh ...args`, with `env`) on an agent and
 * returns what it printed: the tests of what a task can read of the agent's environment. The job
 * goes in as JSON, so no HCL parser touches the `${…}` references it carries.
 */
import assert from 'node:assert/strict';
import { api } from '../../integration/helpers/agent-process.js';
import { jobAllocs, waitFor } from '../../integration/helpers/client-agent.js';

export async function rawExecStdout(address: string, env: Record<string, string>, script: string, args: string[]): Promise<string> {
  const put = await api(address, 'PUT', '/v1/jobs', {
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
          Tasks: [{ Name: 't', Driver: 'raw_exec', Env: env, Config: { command: '/bin/sh', args: ['-c', script, 'sh', ...args] }, Resources: { CPU: 20, MemoryMB: 16 } }],
        },
      ],
    },
  });
  assert.equal(put.status, 200, put.text);
  const alloc = await waitFor('the task to finish', async () => (await jobAllocs(address, 'steal')).find((a) => a.ClientStatus === 'complete' || a.ClientStatus === 'failed'));
  assert.equal(alloc.ClientStatus, 'complete', JSON.stringify(alloc.TaskStates));
  return (await api(address, 'GET', `/v1/client/fs/logs/${alloc.ID}?task=t&type=stdout&plain=true`)).text;
}
