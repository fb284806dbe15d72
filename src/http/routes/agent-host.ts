/**
 * `GET /v1/agent/host`: Nomad's HostDataResponse, the host facts an operator pulls for a
 * debug bundle: OS, network interfaces, resolv.conf, hosts, the agent's environment (values
 * of secret-looking names redacted) and disk usage of `/` and the agent's working directory.
 */
import { readFileSync, statfsSync } from 'node:fs';
import { networkInterfaces, release, type, version } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { queryOptions, sendJson, type RouteContext } from '../route-context.js';
import { acl } from '../acl/route-acl.js';

const SECRET_NAME = /TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL/i;

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function diskUsage(path: string): { DiskMB: number; UsedMB: number } | undefined {
  try {
    const s = statfsSync(path);
    const mb = (blocks: number) => Math.floor((blocks * s.bsize) / (1024 * 1024));
    return { DiskMB: mb(s.blocks), UsedMB: mb(s.blocks - s.bfree) };
  } catch {
    return undefined;
  }
}

/** The host facts, in Nomad's HostData shape. */
export function hostData(): Record<string, unknown> {
  const network: Record<string, string>[] = [];
  for (const [name, addrs] of Object.entries(networkInterfaces())) {
    for (const a of addrs ?? []) network.push({ interface: name, address: a.address, family: a.family, netmask: a.netmask, mac: a.mac, cidr: a.cidr ?? '' });
  }
  const environment: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) environment[k] = SECRET_NAME.test(k) ? '<redacted>' : (v ?? '');
  const disk: Record<string, { DiskMB: number; UsedMB: number }> = {};
  for (const path of new Set(['/', process.cwd()])) {
    const u = diskUsage(path);
    if (u) disk[path] = u;
  }
  return {
    OS: `${type()} ${release()} ${version()}`,
    Network: network,
    ResolvConf: readText('/etc/resolv.conf'),
    Hosts: readText('/etc/hosts'),
    Environment: environment,
    Disk: disk,
  };
}

/** Registers /v1/agent/host. */
export function registerAgentHostRoutes(app: FastifyInstance, ctx: RouteContext): void {
  app.get('/v1/agent/host', acl.rule('agent', 'read'), (req, reply) =>
    sendJson(reply, { AgentID: ctx.client?.nodeId() ?? ctx.agent.name, HostData: hostData() }, queryOptions(req).pretty),
  );
}
