/**
 * Task actions end to end (Nomad 1.7+): a real -dev agent runs a raw_exec task that declares an
 * `action`; `caravan action` runs it, printing its output and exiting with its exit code, and
 * the `/v1/job/:job/action` websocket answers the same frames as alloc exec.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { call, runCli, type AgentProcess } from './helpers/agent-process.js';
import { actionOnce } from './helpers/action-socket.js';
import { runJob, startDevAgent, teardown, waitRunning } from './helpers/client-agent.js';

const JOB = `
job "actions" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "raw_exec"
      config {
        command = "/bin/sleep"
        args    = ["3600"]
      }
      action "greet" {
        command = "/bin/sh"
        args    = ["-c", "echo hello-from-action in $NOMAD_TASK_NAME; echo to-stderr >&2; exit 3"]
      }
      action "ok" {
        command = "/bin/echo"
        args    = ["all", "fine"]
      }
      resources {
        cpu    = 20
        memory = 16
      }
    }
  }
}`;

describe('task actions on a -dev agent', () => {
  let agent: AgentProcess;
  let dir: string;
  let allocId: string;

  before(async () => {
    dir = await mkdtemp('/tmp/cv-action-');
    agent = await startDevAgent();
    await runJob(agent.address, dir, 'actions', JOB);
    allocId = (await waitRunning(agent.address, 'actions', 1, 30_000))[0]!.ID;
  });
  after(async () => {
    await teardown(agent, agent?.dataDir ?? dir);
    await teardown(undefined, dir);
  });

  it('`caravan action -job -group -task NAME` prints the output and exits with the command\'s code', async () => {
    const r = await runCli(agent.address, ['action', '-job', 'actions', '-group', 'g', '-task', 't', '-t=false', 'greet']);
    assert.equal(r.code, 3, r.stderr);
    assert.equal(r.stdout, 'hello-from-action in t\n');
    assert.match(r.stderr, /to-stderr/);
  });

  it('`caravan job action -alloc PREFIX NAME` runs it in that allocation (its only task), exit 0', async () => {
    const r = await runCli(agent.address, ['job', 'action', '-job', 'actions', '-alloc', allocId.slice(0, 8), 'ok']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'all fine\n');
  });

  it('an unknown action is refused with a message naming it and the actions the task has', async () => {
    const r = await runCli(agent.address, ['action', '-job', 'actions', '-group', 'g', '-task', 't', 'nope']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /action "nope" not found in task "t" \(the task's actions: greet, ok\)/);
  });

  it('the CLI refuses a missing -job, and -group/-task without -alloc', async () => {
    const noJob = await runCli(agent.address, ['action', 'greet']);
    assert.notEqual(noJob.code, 0);
    assert.match(noJob.stderr, /A job ID is required/);
    const noGroup = await runCli(agent.address, ['action', '-job', 'actions', 'greet']);
    assert.notEqual(noGroup.code, 0);
    assert.match(noGroup.stderr, /A group name is required if no allocation is provided/);
  });

  it('the websocket route runs the action with alloc exec\'s frames and exit code', async () => {
    const r = await actionOnce(agent.address, 'actions', { action: 'greet', allocID: allocId, task: 't', group: 'g' });
    assert.equal(r.exitCode, 3);
    assert.equal(r.stdout, 'hello-from-action in t\n');
    assert.equal(r.stderr, 'to-stderr\n');
  });

  it('the websocket route closes with the reason for a bad request', async () => {
    const missing = await actionOnce(agent.address, 'actions', { allocID: allocId, task: 't' });
    assert.equal(missing.exitCode, undefined);
    assert.match(missing.reason, /missing "action" parameter/);
    const noTask = await actionOnce(agent.address, 'actions', { action: 'greet', allocID: allocId, task: 'other' });
    assert.equal(noTask.exitCode, undefined);
    assert.match(noTask.reason, /task "other" not found/);
  });

  it('a plain GET (no upgrade) is answered 400', async () => {
    const r = await call(agent.address, 'GET', `/v1/job/actions/action?action=greet&allocID=${allocId}&task=t`);
    assert.equal(r.status, 400, r.text);
    assert.match(r.text, /websocket/);
  });

  it('the actions list still answers next to the action route', async () => {
    const r = await call<{ Name: string }[]>(agent.address, 'GET', '/v1/job/actions/actions');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(r.body.map((a) => a.Name).sort(), ['greet', 'ok']);
  });
});
