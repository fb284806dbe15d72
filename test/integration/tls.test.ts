/**
 * TLS through real agents, with certificates made at test time: the HTTPS API reached by the CLI
 * through a CA file (and refused without it), a client agent joining its server over mutual TLS
 * (tls.rpc, verify_server_hostname), exec through the server to the client over wss, the internal
 * client ↔ server routes refusing a caller without a client certificate, and verify_https_client
 * refusing any caller without one.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AllocListStub, NodeListStub } from '../../src/structs/index.js';
import { tlsFetch } from '../../src/tls/tls-fetch.js';
import { runCli, startAgent, type AgentProcess } from './helpers/agent-process.js';
import { killDataDirProcesses } from './helpers/processes.js';
import { sleepJobHcl } from './helpers/sleep-job.js';
import { waitFor } from './helpers/client-agent.js';
import { makeCa, makeLeaf, type CertFiles } from './helpers/tls-certs.js';

function tlsBlock(ca: CertFiles, own: CertFiles, extra = ''): string {
  return `tls {\n  http = true\n  ca_file = "${ca.cert}"\n  cert_file = "${own.cert}"\n  key_file = "${own.key}"\n${extra}}\n`;
}

async function stopAll(agents: (AgentProcess | undefined)[]): Promise<void> {
  for (const a of agents.reverse()) {
    if (!a) continue;
    if (a.proc.exitCode === null && a.proc.signalCode === null) await a.stop();
    await killDataDirProcesses(a.dataDir);
  }
}

test('mutual TLS: the CLI through a CA file, a client agent joins its server, exec over wss, internal routes need a client certificate', async () => {
  const tmp = await mkdtemp('/tmp/cv-tls-');
  const agents: (AgentProcess | undefined)[] = [];
  try {
    const ca = makeCa(tmp);
    const serverCert = makeLeaf(tmp, ca, 'server', ['server.global.nomad', 'localhost'], ['127.0.0.1']);
    const clientCert = makeLeaf(tmp, ca, 'client', ['client.global.nomad', 'localhost'], ['127.0.0.1']);
    const rpc = '  rpc = true\n  verify_server_hostname = true\n';
    await writeFile(join(tmp, 's.hcl'), tlsBlock(ca, serverCert, rpc));
    await writeFile(join(tmp, 'c.hcl'), tlsBlock(ca, clientCert, rpc));
    const server = await startAgent({ roleArgs: ['-server', '-config', join(tmp, 's.hcl')], dataDir: join(tmp, 's'), https: { ca: ca.cert } });
    agents.push(server);
    const client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`, '-config', join(tmp, 'c.hcl')], dataDir: join(tmp, 'c'), https: { ca: ca.cert } });
    agents.push(client);
    assert.match(server.address, /^https:/);

    // The test's own calls trust the CA, without a client certificate.
    const get = tlsFetch({ ca: readFileSync(ca.cert) });
    const json = async <T>(path: string): Promise<T> => (await (await get(`${server.address}${path}`)).json()) as T;
    // The client registered and heartbeats over mutual TLS.
    await waitFor('the client node', async () => (await json<NodeListStub[]>('/v1/nodes')).find((n) => n.Status === 'ready'));

    // The CLI: through the CA file (NOMAD_CACERT or -ca-cert), refused without it.
    const env = { NOMAD_CACERT: ca.cert };
    const nodes = await runCli(server.address, ['node', 'status', '-json'], { env });
    assert.equal(nodes.code, 0, nodes.stderr);
    assert.equal((JSON.parse(nodes.stdout) as NodeListStub[]).length, 1);
    const untrusted = await runCli(server.address, ['node', 'status']);
    assert.equal(untrusted.code, 1);
    assert.match(untrusted.stderr, /certificate|SELF_SIGNED|UNABLE_TO_VERIFY/i);

    // A job runs on the client; exec goes CLI → server (wss) → client (mutual TLS wss).
    const file = join(tmp, 'sleeper.hcl');
    await writeFile(file, sleepJobHcl('sleeper'));
    const run = await runCli(server.address, ['job', 'run', '-detach', '-ca-cert', ca.cert, file]);
    assert.equal(run.code, 0, run.stderr);
    const alloc = await waitFor('the running allocation', async () =>
      (await json<AllocListStub[]>('/v1/job/sleeper/allocations')).find((a) => a.ClientStatus === 'running'),
    );
    const exec = await runCli(server.address, ['alloc', 'exec', '-task', 't', alloc.ID, 'echo', 'over-tls'], { env });
    assert.equal(exec.code, 0, exec.stderr);
    assert.equal(exec.stdout.trim(), 'over-tls');
    // Logs come through the server's forward to the client (mutual TLS https).
    const logs = await get(`${server.address}/v1/client/fs/ls/${alloc.ID}?path=/`);
    assert.equal(logs.status, 200, await logs.text());

    // The internal client ↔ server routes take only callers with a certificate from the CA.
    const internal = await get(`${server.address}/v1/internal/node/register`, { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } });
    const internalText = await internal.text();
    assert.equal(internal.status, 403, internalText);
    assert.match(internalText, /client certificate/);
    // No plaintext API on the port.
    await assert.rejects(fetch(`http://127.0.0.1:${server.port}/v1/agent/health`));
  } finally {
    await stopAll(agents);
    await rm(tmp, { recursive: true, force: true });
  }
});

test('verify_https_client: a caller without a client certificate is refused; -client-cert/-client-key, -tls-server-name and -tls-skip-verify', async () => {
  const tmp = await mkdtemp('/tmp/cv-tls-');
  const agents: (AgentProcess | undefined)[] = [];
  try {
    const ca = makeCa(tmp);
    const serverCert = makeLeaf(tmp, ca, 'server', ['server.global.nomad'], ['127.0.0.1']);
    const cli = makeLeaf(tmp, ca, 'cli', ['cli.global.nomad']);
    await writeFile(join(tmp, 's.hcl'), tlsBlock(ca, serverCert, '  verify_https_client = true\n'));
    const server = await startAgent({ roleArgs: ['-server', '-config', join(tmp, 's.hcl')], dataDir: join(tmp, 's'), https: { ca: ca.cert, ...cli } });
    agents.push(server);

    const noCert = await runCli(server.address, ['namespace', 'list'], { env: { NOMAD_CACERT: ca.cert } });
    assert.equal(noCert.code, 1);
    const withCert = await runCli(server.address, ['namespace', 'list', '-client-cert', cli.cert, '-client-key', cli.key, '-tls-server-name', 'server.global.nomad'], { env: { NOMAD_CACERT: ca.cert } });
    assert.equal(withCert.code, 0, withCert.stderr);
    assert.match(withCert.stdout, /default/);
    const wrongName = await runCli(server.address, ['namespace', 'list', '-tls-server-name', 'other.global.nomad'], { env: { NOMAD_CACERT: ca.cert, NOMAD_CLIENT_CERT: cli.cert, NOMAD_CLIENT_KEY: cli.key } });
    assert.equal(wrongName.code, 1);
    assert.match(wrongName.stderr, /other\.global\.nomad|altnames|ERR_TLS_CERT_ALTNAME_INVALID/i);
    const skip = await runCli(server.address, ['namespace', 'list'], { env: { NOMAD_SKIP_VERIFY: 'true', NOMAD_CLIENT_CERT: cli.cert, NOMAD_CLIENT_KEY: cli.key } });
    assert.equal(skip.code, 0, skip.stderr);
  } finally {
    await stopAll(agents);
    await rm(tmp, { recursive: true, force: true });
  }
});
