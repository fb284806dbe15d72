/**
 * The agent's `tls { … }` block, as Nomad's: `http` serves the HTTP API over HTTPS; `rpc` makes
 * the calls between agents (a client's to its servers, a server's forwards to clients, a
 * client-only agent's proxying) mutual TLS — Caravan's agents talk over the HTTP API, so `rpc`
 * needs `http`, and the internal client ↔ server routes then require a verified client
 * certificate; `verify_https_client` requires one for every HTTPS caller; `verify_server_hostname`
 * checks that a server's certificate names `server.<region>.nomad`, as Nomad's does. Files are
 * read once, at start; a missing or unreadable one is a configuration error naming it.
 */
import { readFileSync } from 'node:fs';
import { Agent as HttpsAgent, type ServerOptions as HttpsServerOptions } from 'node:https';
import { checkServerIdentity, type PeerCertificate } from 'node:tls';
import { CaravanError } from '../structs/caravan-error.js';

/** The `tls` block as configured. */
export interface TlsConfig {
  http: boolean;
  rpc: boolean;
  caFile: string;
  certFile: string;
  keyFile: string;
  verifyServerHostname: boolean;
  verifyHttpsClient: boolean;
}

/** The default: no TLS. */
export function defaultTlsConfig(): TlsConfig {
  return { http: false, rpc: false, caFile: '', certFile: '', keyFile: '', verifyServerHostname: false, verifyHttpsClient: false };
}

/** A TLS setting that cannot be used; `field` names it (e.g. "tls.cert_file"). */
export class TlsConfigError extends CaravanError<'AGENT_CONFIG_INVALID'> {
  constructor(
    readonly field: string,
    reason: string,
  ) {
    super('AGENT_CONFIG_INVALID', { field, reason });
    this.name = 'TlsConfigError';
  }
}

/** Checks the block's combinations (files are read by loadAgentTls). */
export function validateTlsConfig(c: TlsConfig): void {
  if (!c.http && !c.rpc) return;
  if (c.rpc && !c.http) throw new TlsConfigError('tls.rpc', 'needs tls.http: Caravan agents talk to each other over the HTTP API');
  if (c.certFile === '') throw new TlsConfigError('tls.cert_file', 'is required when tls.http is enabled');
  if (c.keyFile === '') throw new TlsConfigError('tls.key_file', 'is required when tls.http is enabled');
  if ((c.rpc || c.verifyHttpsClient || c.verifyServerHostname) && c.caFile === '') {
    throw new TlsConfigError('tls.ca_file', 'is required to verify peers (tls.rpc, verify_https_client, verify_server_hostname)');
  }
}

function readPem(path: string, field: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new TlsConfigError(field, `cannot read ${path}: ${(err as Error).message}`);
  }
}

/** The hostname a server's certificate names in Nomad's convention. */
export function serverHostname(region: string): string {
  return `server.${region}.nomad`;
}

/**
 * How this agent calls other agents over TLS: trusting the CA, presenting its own certificate
 * (mutual TLS), checking a server's hostname when verify_server_hostname is on. Peers are
 * addressed by IP, so without that setting only the chain is checked (as Nomad).
 */
export class OutboundTls {
  /** Pools connections to servers. */
  readonly serverAgent: HttpsAgent;
  /** Pools connections to client agents (chain checked, not the name). */
  readonly clientAgent: HttpsAgent;

  constructor(
    readonly ca: Buffer | undefined,
    readonly cert: Buffer | undefined,
    readonly key: Buffer | undefined,
    /** The name a server's certificate must carry; undefined: chain only. */
    readonly serverName: string | undefined,
  ) {
    this.serverAgent = new HttpsAgent({ keepAlive: true, maxSockets: Infinity, ...this.connectOptions('server') });
    this.clientAgent = new HttpsAgent({ keepAlive: true, maxSockets: Infinity, ...this.connectOptions('client') });
  }

  /** Options of a TLS connection to a server or a client agent (node:https, ws). */
  connectOptions(peer: 'server' | 'client'): { ca?: Buffer; cert?: Buffer; key?: Buffer; rejectUnauthorized: true; checkServerIdentity: (host: string, cert: PeerCertificate) => Error | undefined } {
    const name = peer === 'server' ? this.serverName : undefined;
    return {
      ...(this.ca ? { ca: this.ca } : {}),
      ...(this.cert ? { cert: this.cert } : {}),
      ...(this.key ? { key: this.key } : {}),
      rejectUnauthorized: true,
      checkServerIdentity: (_host, cert) => (name === undefined ? undefined : checkServerIdentity(name, cert)),
    };
  }

  /** Closes pooled connections (agent shutdown). */
  close(): void {
    this.serverAgent.destroy();
    this.clientAgent.destroy();
  }
}

/** The loaded TLS material of an agent: what its HTTPS listener and its outbound calls use. */
export interface AgentTls {
  config: TlsConfig;
  /** fastify's `https` options. */
  server: HttpsServerOptions;
  /** Outbound calls to other agents. */
  outbound: OutboundTls;
}

/** Reads the files of an enabled `tls` block; undefined when TLS is off. */
export function loadAgentTls(c: TlsConfig, region: string): AgentTls | undefined {
  validateTlsConfig(c);
  if (!c.http) return undefined;
  const cert = readPem(c.certFile, 'tls.cert_file');
  const key = readPem(c.keyFile, 'tls.key_file');
  const ca = c.caFile ? readPem(c.caFile, 'tls.ca_file') : undefined;
  return {
    config: c,
    server: {
      cert,
      key,
      ...(ca ? { ca } : {}),
      // With rpc, agents present certificates; verify_https_client makes every caller present one.
      requestCert: c.rpc || c.verifyHttpsClient,
      rejectUnauthorized: c.verifyHttpsClient,
    },
    outbound: new OutboundTls(ca, cert, key, c.verifyServerHostname ? serverHostname(region) : undefined),
  };
}

/** `http://…` → `https://…` (and ws → wss) when TLS is on: agents address each other by host:port. */
export function withScheme(base: string, tls: boolean): string {
  if (!tls) return base;
  return base.replace(/^http:\/\//, 'https://').replace(/^ws:\/\//, 'wss://');
}
