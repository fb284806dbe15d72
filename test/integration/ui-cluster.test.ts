/**
 * The web UI's cluster-wide controls in a real browser against a real dev agent: promoting a
 * canary deployment, the namespace selector, and the ACL token sent as X-Nomad-Token (signed in on
 * the tokens page).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import type { Deployment } from '../../src/structs/index.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { launchBrowser, screenshot, type TestBrowser } from './helpers/browser.js';
import { waitUntil } from './helpers/poseidon-client.js';

const S = 1_000_000_000;

function canaryJob(id: string, version: string, namespace = 'default'): Record<string, unknown> {
  return {
    ID: id,
    Namespace: namespace,
    Type: 'service',
    Datacenters: ['dc1'],
    TaskGroups: [
      {
        Name: 'web',
        Count: 1,
        Update: { MaxParallel: 1, Canary: 1, HealthCheck: 'task_states', MinHealthyTime: 1 * S, HealthyDeadline: 60 * S, ProgressDeadline: 120 * S, AutoRevert: false, AutoPromote: false, Stagger: 30 * S },
        Tasks: [
          {
            Name: 't',
            Driver: 'raw_exec',
            Env: { VERSION: version },
            Config: { command: '/bin/sh', args: ['-c', 'while true; do sleep 1; done'] },
            Resources: { CPU: 20, MemoryMB: 16 },
          },
        ],
      },
    ],
  };
}

async function latestDeployment(address: string, id: string): Promise<Deployment | null> {
  return (await api<Deployment | null>(address, 'GET', `/v1/job/${id}/deployment`)).body;
}

describe('web UI: deployments, namespaces, token', () => {
  let agent: AgentProcess;
  let browser: TestBrowser;
  let page: Page;

  before(async () => {
    agent = await startAgent({ roleArgs: ['-dev'] });
    browser = await launchBrowser();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await agent?.stop();
    await agent?.cleanup();
  });

  test('a canary deployment is promoted from the job page', async () => {
    assert.equal((await api(agent.address, 'PUT', '/v1/jobs', { Job: canaryJob('canary', 'v0') })).status, 200);
    await waitUntil('version 0 deployed', async () => (await latestDeployment(agent.address, 'canary'))?.Status === 'successful', 30_000);
    assert.equal((await api(agent.address, 'PUT', '/v1/jobs', { Job: canaryJob('canary', 'v1') })).status, 200);
    await waitUntil('a healthy canary', async () => {
      const d = await latestDeployment(agent.address, 'canary');
      return d && d.JobVersion === 1 && d.TaskGroups.web!.HealthyAllocs >= 1 ? d : undefined;
    }, 30_000);

    await page.goto(`${agent.address}/ui/jobs/canary`);
    const card = page.getByTestId('deployment');
    await card.getByText('Version 1.').waitFor();
    // The canary is marked in the job's allocations until it is promoted (Nomad then clears the flag).
    await page.getByRole('table', { name: 'Allocations' }).getByTestId('canary').first().waitFor();
    await screenshot(page, 'deployment-canary');
    await card.getByRole('button', { name: 'Promote' }).click();
    await card.getByText('(promoted)').waitFor();
    await card.getByText('successful', { exact: true }).waitFor({ timeout: 30_000 });
    const d = await latestDeployment(agent.address, 'canary');
    assert.equal(d?.TaskGroups.web?.Promoted, true);

    // The deployment's ID leads to its page, which lists the allocations it placed.
    await card.getByRole('link', { name: d!.ID.slice(0, 8) }).click();
    await page.waitForURL(new RegExp(`/ui/deployments/${d!.ID}$`));
    await page.getByRole('heading', { level: 1, name: /Deployment/ }).waitFor();
    await page.getByRole('table', { name: 'Allocations' }).locator('[data-testid=alloc-row]').first().waitFor();
    await screenshot(page, 'deployment-detail');
    // The deployments list links there too.
    await page.goto(`${agent.address}/ui/deployments`);
    await page.locator('[data-testid=deployment-row]').getByRole('link', { name: d!.ID.slice(0, 8) }).waitFor();
  });

  test('the namespace selector scopes the jobs list', async () => {
    assert.equal((await api(agent.address, 'PUT', '/v1/namespace/team-b', { Name: 'team-b' })).status, 200);
    assert.equal((await api(agent.address, 'PUT', '/v1/jobs?namespace=team-b', { Job: canaryJob('other-team', 'v0', 'team-b') })).status, 200);
    await page.goto(`${agent.address}/ui/jobs`);
    await page.locator('[data-testid=job-row][data-job=canary]').waitFor();
    assert.equal(await page.locator('[data-testid=job-row][data-job=other-team]').count(), 0);
    await page.getByLabel('Namespace').selectOption('team-b');
    await page.locator('[data-testid=job-row][data-job=other-team]').waitFor();
    assert.equal(await page.locator('[data-testid=job-row][data-job=canary]').count(), 0);
    await page.getByLabel('Namespace').selectOption('*');
    await page.locator('[data-testid=job-row][data-job=canary]').waitFor();
    await page.locator('[data-testid=job-row][data-job=other-team]').waitFor();
    await page.getByLabel('Namespace').selectOption('default');
  });

  test('a token signed in on the tokens page is sent as X-Nomad-Token with every request and kept in the browser', async () => {
    await page.goto(`${agent.address}/ui/jobs`);
    await page.getByTestId('token-link').click();
    await page.waitForURL(/\/ui\/settings\/tokens$/);
    // ACLs are off on this agent: the page says so, and a token is still sent (not checked).
    await page.getByTestId('acl-disabled').waitFor();
    await page.getByLabel('Secret ID').fill('secret-123');
    const sent = page.waitForRequest((r) => r.url().includes('/v1/') && r.headers()['x-nomad-token'] === 'secret-123');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await sent;
    // After a reload the token is still there (localStorage) and still sent.
    const again = page.waitForRequest((r) => r.url().includes('/v1/') && r.headers()['x-nomad-token'] === 'secret-123');
    await page.goto(`${agent.address}/ui/jobs`);
    await again;
    await page.goto(`${agent.address}/ui/settings/tokens`);
    await page.getByTestId('acl-disabled').getByText('A token is stored in this browser.').waitFor();
    await page.evaluate(() => localStorage.removeItem('caravan.token'));
  });
});
