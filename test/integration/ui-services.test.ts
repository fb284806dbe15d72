/**
 * Services in the web UI, in a real browser against a real dev agent: a job's Services tab
 * lists the registration of its `provider = "nomad"` service (tags, address, allocation,
 * client); the allocation page shows the service's http check passing, then failing once the
 * server answers 500 — and the job's tab drops the registration when the job stops, each in the
 * page already open, without a reload.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { CheckQueryResult } from '../../src/client/serviceregistration/alloc-check-runner.js';
import type { AllocListStub } from '../../src/structs/index.js';
import type { ServiceRegistration } from '../../src/structs/service-registration.js';
import { api, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { launchBrowser, screenshot, type TestBrowser } from './helpers/browser.js';
import { waitUntil } from './helpers/poseidon-client.js';

/** An HTTP server that answers 200 "ok" until the file named by argv[1] exists, then 500 "sick". */
const SERVER =
  "const fs = require('fs'); require('http').createServer((q, s) => { const sick = fs.existsSync(process.argv[1]); s.statusCode = sick ? 500 : 200; s.end(sick ? 'sick' : 'ok'); }).listen(+process.env.NOMAD_PORT_http, process.env.NOMAD_IP_http)";

function jobHcl(sickFile: string): string {
  return `
job "websvc" {
  datacenters = ["dc1"]
  group "g" {
    network {
      port "http" {}
    }
    task "server" {
      driver = "raw_exec"
      config {
        command = "${process.execPath}"
        args    = ["-e", ${JSON.stringify(SERVER)}, "${sickFile}"]
      }
      service {
        name     = "ui-web"
        provider = "nomad"
        port     = "http"
        tags     = ["v1", "alloc-\${NOMAD_ALLOC_INDEX}"]
        check {
          name     = "health"
          type     = "http"
          path     = "/health"
          interval = "1s"
          timeout  = "1s"
        }
      }
      resources {
        cpu    = 50
        memory = 64
      }
    }
  }
}
`;
}

describe('web UI: services and their checks', () => {
  let agent: AgentProcess;
  let browser: TestBrowser;
  let page: Page;
  let dir: string;
  let sickFile: string;
  let alloc: AllocListStub;
  let reg: ServiceRegistration;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'caravan-ui-svc-'));
    sickFile = join(dir, 'sick');
    agent = await startAgent({ roleArgs: ['-dev'], readyTimeoutMs: 60_000 });
    const a = agent.address;
    const parsed = await api(a, 'POST', '/v1/jobs/parse', { JobHCL: jobHcl(sickFile), Canonicalize: true });
    assert.equal(parsed.status, 200, parsed.text);
    const submitted = await api(a, 'PUT', '/v1/jobs', { Job: parsed.body });
    assert.equal(submitted.status, 200, submitted.text);
    alloc = await waitUntil('a running websvc allocation', async () => (await api<AllocListStub[]>(a, 'GET', '/v1/job/websvc/allocations')).body.find((x) => x.ClientStatus === 'running'), 30_000);
    reg = await waitUntil('the ui-web registration', async () => (await api<ServiceRegistration[]>(a, 'GET', '/v1/job/websvc/services')).body[0], 30_000);
    await waitUntil(
      'the health check passing',
      async () => Object.values((await api<Record<string, CheckQueryResult>>(a, 'GET', `/v1/client/allocation/${alloc.ID}/checks`)).body).some((c) => c.Check === 'health' && c.Status === 'success'),
      30_000,
    );
    browser = await launchBrowser();
    page = await browser.newPage();
  });
  after(async () => {
    await browser?.close();
    await agent?.stop();
    await agent?.cleanup();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test("the job's Services tab lists the registration with its tags, address, allocation and client", async () => {
    await page.goto(`${agent.address}/ui/jobs/websvc`);
    await page.getByRole('navigation', { name: 'Job sections' }).getByRole('link', { name: 'Services' }).click();
    await page.waitForURL(/\/ui\/jobs\/websvc\/services$/);
    const row = page.locator('[data-testid=service-row][data-service=ui-web]');
    await row.waitFor();
    await row.getByText(`${reg.Address}:${reg.Port}`).waitFor();
    await row.getByText('alloc-0', { exact: true }).waitFor();
    await row.getByText('v1', { exact: true }).waitFor();
    await row.getByRole('link', { name: alloc.ID.slice(0, 8) }).waitFor();
    await row.getByRole('link', { name: reg.NodeID.slice(0, 8) }).waitFor();
    await screenshot(page, 'job-services');
  });

  test('the allocation page shows the check passing, then failing when the server answers 500, without a reload', async () => {
    await page.goto(`${agent.address}/ui/allocations/${alloc.ID}`);
    const services = page.getByTestId('alloc-services');
    await services.locator('[data-testid=service-row][data-service=ui-web]').getByText(`${reg.Address}:${reg.Port}`).waitFor();
    const check = services.locator('[data-testid=check-row][data-check=health]');
    await check.getByText('passing', { exact: true }).waitFor();
    await check.getByText('HTTP 200: ok').waitFor();
    await services.getByText('1/1 passing').waitFor();
    await screenshot(page, 'alloc-services-passing');

    // Marks this document: a reload would lose the mark.
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
    await writeFile(sickFile, 'now');
    await check.getByText('failing', { exact: true }).waitFor();
    await check.getByText('HTTP 500: sick').waitFor();
    await services.getByText('0/1 passing').waitFor();
    assert.equal(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument), true);
    await screenshot(page, 'alloc-services-failing');
  });

  test("stopping the job removes the registration from the job's Services tab, without a reload", async () => {
    await page.goto(`${agent.address}/ui/jobs/websvc/services`);
    const row = page.locator('[data-testid=service-row][data-service=ui-web]');
    await row.waitFor();
    await page.evaluate(() => ((window as unknown as { __sameDocument: boolean }).__sameDocument = true));
    const stopped = await api(agent.address, 'DELETE', '/v1/job/websvc');
    assert.equal(stopped.status, 200, stopped.text);
    await page.getByText('No service of this job is registered').waitFor();
    assert.equal(await row.count(), 0);
    assert.equal(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument), true);
  });
});
