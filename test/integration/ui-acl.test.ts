/**
 * The web UI against a dev agent with ACLs on, in a real browser: with no token a page says it
 * is not authorized and leads to the sign-in page (no endless "retrying"), the header says so
 * instead of "Live"; a mistyped secret is refused there; a read-only token sees who it is and
 * is offered no action its policy does not grant; a management token is offered them all; and
 * signing out goes back to the anonymous state.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { AclToken } from '../../src/structs/acl.js';
import type { AllocListStub } from '../../src/structs/index.js';
import { call, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { launchBrowser, screenshot, type TestBrowser } from './helpers/browser.js';
import { waitUntil } from './helpers/poseidon-client.js';

const JOB = {
  ID: 'web',
  Type: 'service',
  Datacenters: ['dc1'],
  TaskGroups: [
    {
      Name: 'g',
      Count: 1,
      Update: { MaxParallel: 0 },
      Tasks: [{ Name: 't', Driver: 'raw_exec', Config: { command: '/bin/sh', args: ['-c', 'while true; do sleep 1; done'] }, Resources: { CPU: 20, MemoryMB: 16 } }],
    },
  ],
};

async function signIn(page: Page, address: string, secret: string): Promise<void> {
  await page.goto(`${address}/ui/settings/tokens`);
  await page.getByLabel('Secret ID').fill(secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe('web UI with ACLs: sign-in, who am I, actions by capability', () => {
  let agent: AgentProcess;
  let browser: TestBrowser;
  let page: Page;
  let tmp: string;
  let mgmt: string;
  let reader: AclToken;
  let allocId: string;

  before(async () => {
    tmp = await mkdtemp(join(tmpdir(), 'caravan-ui-acl-'));
    const config = join(tmp, 'acl.hcl');
    await writeFile(config, 'acl {\n  enabled = true\n}\n');
    agent = await startAgent({ roleArgs: ['-dev'], extraArgs: ['-config', config] });
    const boot = await call<AclToken>(agent.address, 'PUT', '/v1/acl/bootstrap');
    assert.equal(boot.status, 200, boot.text);
    mgmt = boot.body.SecretID;
    const policy = await call(agent.address, 'PUT', '/v1/acl/policy/readonly', mgmt, {
      Name: 'readonly',
      Description: 'read the default namespace and the nodes',
      Rules: 'namespace "default" {\n  policy = "read"\n}\nnode {\n  policy = "read"\n}\n',
    });
    assert.equal(policy.status, 200, policy.text);
    const t = await call<AclToken>(agent.address, 'PUT', '/v1/acl/token', mgmt, { Name: 'ci-reader', Type: 'client', Policies: ['readonly'], ExpirationTTL: 3600 * 1e9 });
    assert.equal(t.status, 200, t.text);
    reader = t.body;
    const reg = await call(agent.address, 'PUT', '/v1/jobs', mgmt, { Job: JOB });
    assert.equal(reg.status, 200, reg.text);
    const alloc = await waitUntil('a running allocation', async () => {
      const l = await call<AllocListStub[]>(agent.address, 'GET', '/v1/job/web/allocations', mgmt);
      return l.body.find((a) => a.ClientStatus === 'running');
    }, 30_000);
    allocId = alloc.ID;
    browser = await launchBrowser();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await agent?.stop();
    await agent?.cleanup();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test('with no token a page says why and leads to the sign-in page; the header does not say Live', async () => {
    await page.goto(`${agent.address}/ui/jobs`);
    const box = page.getByTestId('forbidden');
    await box.getByText(/no token is signed in/).waitFor();
    await page.getByTestId('live-state').getByText('Not signed in').waitFor();
    assert.equal(await page.getByText(/retrying in/).count(), 0, 'a 403 is not retried forever');
    await screenshot(page, 'acl-no-token');
    await box.getByRole('link', { name: 'Sign in with a token' }).click();
    await page.waitForURL(/\/ui\/settings\/tokens$/);
    await page.getByTestId('token-identity').getByText(/Not signed in/).waitFor();
    assert.equal(await page.getByTestId('token-name').innerText(), 'Anonymous Token');
  });

  test('a mistyped secret is refused on the sign-in page and not kept', async () => {
    await signIn(page, agent.address, '00000000-0000-0000-0000-000000000000');
    await page.getByTestId('sign-in-error').getByText(/ACL token not found/).waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('caravan.token')), null);
  });

  test('a read-only token sees who it is and is offered no action its policy does not grant', async () => {
    await signIn(page, agent.address, reader.SecretID);
    await page.getByTestId('token-name').getByText('ci-reader').waitFor();
    assert.equal(await page.getByTestId('token-type').innerText(), 'client');
    assert.equal(await page.getByTestId('token-policies').innerText(), 'readonly');
    assert.notEqual(await page.getByTestId('token-expiry').innerText(), 'Never', 'a token with a TTL shows when it expires');
    await page.getByTestId('token-policy').getByText('readonly').waitFor();
    await page.getByTestId('token-link').getByText('Token: ci-reader').waitFor();
    await screenshot(page, 'acl-signed-in-reader');

    await page.goto(`${agent.address}/ui/jobs`);
    await page.locator('[data-testid=job-row][data-job=web]').waitFor();
    await page.getByTestId('live-state').getByText('Live').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Run job' }).count(), 0, 'no submit-job: no Run job');

    await page.goto(`${agent.address}/ui/jobs/web`);
    await page.getByTestId('task-group').waitFor();
    const actions = page.getByLabel('Job actions');
    assert.equal(await actions.getByRole('button', { name: 'Stop' }).getAttribute('data-denied'), 'submit-job');
    assert.ok(await actions.getByRole('button', { name: 'Stop' }).isDisabled());
    assert.ok(await actions.getByRole('button', { name: 'Restart' }).isDisabled());
    assert.ok(await page.getByRole('button', { name: 'Scale' }).isDisabled());
    assert.ok(await page.getByLabel('Count of group g').isDisabled());

    await page.goto(`${agent.address}/ui/allocations/${allocId}`);
    const task = page.locator('[data-testid=task-state][data-task=t]');
    await task.getByText('running').first().waitFor();
    assert.ok(await page.getByLabel('Allocation actions').getByRole('button', { name: 'Restart' }).isDisabled());
    assert.ok(await page.getByLabel('Allocation actions').getByRole('button', { name: 'Stop' }).isDisabled());
    assert.equal(await task.getByRole('link', { name: 'Exec' }).count(), 0, 'no alloc-node-exec: no Exec');
    assert.equal(await task.getByRole('link', { name: 'Logs' }).count(), 0, 'no read-logs: no Logs');
    await screenshot(page, 'acl-reader-allocation');
  });

  test('a management token is offered every action; signing out returns to the anonymous state', async () => {
    await signIn(page, agent.address, mgmt);
    await page.getByTestId('token-type').getByText('management').waitFor();
    await page.getByTestId('token-name').getByText('Bootstrap Token').waitFor();

    await page.goto(`${agent.address}/ui/jobs/web`);
    await page.getByTestId('task-group').waitFor();
    const stop = page.getByLabel('Job actions').getByRole('button', { name: 'Stop' });
    await waitUntil('Stop enabled', async () => (await stop.isEnabled()) || undefined);
    assert.equal(await stop.getAttribute('data-denied'), null);
    await page.goto(`${agent.address}/ui/jobs`);
    await page.getByRole('link', { name: 'Run job' }).waitFor();

    await page.goto(`${agent.address}/ui/allocations/${allocId}`);
    const task = page.locator('[data-testid=task-state][data-task=t]');
    await task.getByRole('link', { name: 'Exec' }).waitFor();
    await task.getByRole('link', { name: 'Logs' }).waitFor();

    await page.goto(`${agent.address}/ui/settings/tokens`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByTestId('token-name').getByText('Anonymous Token').waitFor();
    assert.equal(await page.evaluate(() => localStorage.getItem('caravan.token')), null);
    await page.goto(`${agent.address}/ui/jobs`);
    await page.getByTestId('forbidden').waitFor();
  });
});
