/**
 * A small ACL-enabled cluster for hostile tests: a server and a client-only agent (which resolves
 * tokens through its server) on loopback, both with `acl { enabled = true }`, bootstrapped over
 * the API. Namespaces, policies and tokens are made with the management token; `close` stops
 * both agents and removes what they left (tasks survive their agent by design).
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AclToken } from '../../../src/structs/acl.js';
import type { AllocListStub, Node } from '../../../src/structs/index.js';
import { call, runCli, startAgent, type AgentProcess } from '../../integration/helpers/agent-process.js';

export { call, type Answer } from '../../integration/helpers/agent-process.js';
import { waitFor } from '../../integration/helpers/client-agent.js';
import { killDataDirProcesses } from '../../integration/helpers/processes.js';

/** A running server + client pair with ACLs on. */
export interface AclCluster {
  server: AgentProcess;
  client: AgentProcess;
  /** The bootstrap management token's secret. */
  mgmt: string;
  /** The directory holding both data dirs and the job files. */
  tmp: string;
  /** The ready client node. */
  node: Node;
  /** Writes a policy with `rules` and answers a client token holding it. */
  token(name: string, rules: string): Promise<AclToken>;
  /** Creates namespace `name`. */
  namespace(name: string): Promise<void>;
  /** Runs the HCL job (as management) and answers its running allocation. */
  runJob(id: string, namespace: string, hcl: string): Promise<AllocListStub>;
  close(): Promise<void>;
}

/** Starts the pair; `extraConfig` is appended to both agents' config file. */
export async function startAclCluster(extraConfig = ''): Promise<AclCluster> {
  const tmp = await mkdtemp('/tmp/cv-acl-');
  const agents: AgentProcess[] = [];
  const close = async (): Promise<void> => {
    for (const a of [...agents].reverse()) await a.stop().catch(() => undefined);
    for (const a of agents) await killDataDirProcesses(a.dataDir).catch(() => undefined);
    await rm(tmp, { recursive: true, force: true });
  };
  try {
    const config = join(tmp, 'acl.hcl');
    await writeFile(config, `acl {\n  enabled = true\n}\n${extraConfig}`);
    const server = await startAgent({ roleArgs: ['-server'], dataDir: join(tmp, 's'), extraArgs: ['-config', config] });
    agents.push(server);
    const client = await startAgent({ roleArgs: ['-client', `-servers=127.0.0.1:${server.port}`], dataDir: join(tmp, 'c'), extraArgs: ['-config', config] });
    agents.push(client);
    const s = server.address;
    const boot = await call<AclToken>(s, 'PUT', '/v1/acl/bootstrap');
    assert.equal(boot.status, 200, boot.text);
    const mgmt = boot.body.SecretID;
    const node = await waitFor('the client node ready', async () => (await call<Node[]>(s, 'GET', '/v1/nodes', mgmt)).body.find?.((n) => n.Status === 'ready'), 30_000);
    return {
      server,
      client,
      mgmt,
      tmp,
      node,
      async token(name, rules) {
        const p = await call(s, 'PUT', `/v1/acl/policy/${name}`, mgmt, { Name: name, Rules: rules });
        assert.equal(p.status, 200, p.text);
        const t = await call<AclToken>(s, 'PUT', '/v1/acl/token', mgmt, { Name: name, Type: 'client', Policies: [name] });
        assert.equal(t.status, 200, t.text);
        return t.body;
      },
      async namespace(name) {
        const r = await call(s, 'PUT', `/v1/namespace/${name}`, mgmt, { Name: name });
        assert.equal(r.status, 200, r.text);
      },
      async runJob(id, namespace, hcl) {
        const file = join(tmp, `${id}.hcl`);
        await writeFile(file, hcl);
        const run = await runCli(s, ['job', 'run', '-detach', '-token', mgmt, file]);
        assert.equal(run.code, 0, run.stderr);
        return waitFor(
          `${id} running`,
          async () => (await call<AllocListStub[]>(s, 'GET', `/v1/job/${id}/allocations?namespace=${namespace}`, mgmt)).body.find?.((a) => a.ClientStatus === 'running'),
          30_000,
        );
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
