/**
 * An operator who sets the client option `env.denylist` hides exactly the variables it names from
 * every job author: a task's `${env.X}` interpolation leaves them as written and a raw_exec task's
 * inherited environment lacks them. The list replaces Nomad's default (as in Nomad), so a
 * variable of the default list the operator left out is visible, and one mistyped list (names
 * separated by spaces, which would hide nothing) refuses to start the agent instead of exposing
 * what it meant to hide. The secrets are markers this test gives the agent it starts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CARAVAN_BIN, freePort, REPO_ROOT, startAgent, type AgentProcess } from '../integration/helpers/agent-process.js';
import { teardown } from '../integration/helpers/client-agent.js';
import { rawExecStdout } from './helpers/raw-exec-stdout.js';

const mark = (name: string): string => `${name}-${randomBytes(6).toString('hex')}`;

/** An agent config file giving the client's `env.denylist`. */
async function denylistConfig(dir: string, list: string): Promise<string> {
  const file = join(dir, 'env-denylist.hcl');
  await writeFile(file, `client {\n  options = {\n    "env.denylist" = ${JSON.stringify(list)}\n  }\n}\n`);
  return file;
}

test("an agent's own env.denylist hides the variables it names from a task's interpolation and inherited environment", async () => {
  const secrets = { CV_SITE_SECRET: mark('site'), CV_OTHER_SECRET: mark('other') };
  const outOfList = mark('vault');
  const dataDir = await mkdtemp('/tmp/cv-');
  let agent: AgentProcess | undefined;
  try {
    const config = await denylistConfig(dataDir, 'CV_SITE_SECRET, CV_OTHER_SECRET');
    agent = await startAgent({ roleArgs: ['-dev'], dataDir, extraArgs: ['-config', config], env: { ...secrets, VAULT_TOKEN: outOfList } });
    // Every way a raw_exec task reads the agent's environment: `${env.X}` and bare `${X}` in its
    // env and arguments, and the environment the process inherits ($CV_SITE_SECRET in the shell).
    const out = await rawExecStdout(agent.address, { A: '${env.CV_SITE_SECRET}', B: '${CV_OTHER_SECRET}', V: '${env.VAULT_TOKEN}' }, `printf '%s|%s|%s|%s|%s|%s' "$A" "$B" "$1" "$CV_SITE_SECRET" "$CV_OTHER_SECRET" "$V"`, ['${env.CV_OTHER_SECRET}']);
    for (const [name, value] of Object.entries(secrets)) assert.ok(!out.includes(value), `${name} of the agent reached the task: ${out}`);
    assert.equal(
      out,
      `\${env.CV_SITE_SECRET}|\${CV_OTHER_SECRET}|\${env.CV_OTHER_SECRET}|||${outOfList}`,
      'the named variables are left as written and not inherited; the list replaced the default, so VAULT_TOKEN resolves',
    );
  } finally {
    await teardown(agent, dataDir);
  }
});

test('an env.denylist that names no variable (names separated by spaces) refuses to start the agent, naming the option', async () => {
  const dataDir = await mkdtemp('/tmp/cv-');
  try {
    const config = await denylistConfig(dataDir, 'CV_SITE_SECRET CV_OTHER_SECRET');
    const args = [CARAVAN_BIN, 'agent', '-dev', '-config', config, '-bind', '127.0.0.1', '-http-port', String(await freePort()), '-data-dir', dataDir];
    const proc = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    proc.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    proc.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    // An agent that accepted the list would run on: stop it, and the assertions below fail.
    const running = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((done) => proc.on('exit', done));
    clearTimeout(running);
    assert.notEqual(code, 0, output);
    assert.match(output, /client\.options\["env\.denylist"\]/);
    assert.match(output, /"CV_SITE_SECRET CV_OTHER_SECRET" is not an environment variable name/);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});
