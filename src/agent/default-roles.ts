/**
 * The real roles: Server (src/server/server.ts) and Client (src/client/client.ts). A client in
 * the same process as its server talks to it in-process; otherwise over HTTP to `servers`. A
 * server with an etcd block keeps its log and leadership in etcd; otherwise the embedded log.
 */
import { Client } from '../client/client.js';
import { httpServerConnection, inProcessServerConnection } from '../client/server-connection.js';
import { Server } from '../server/server.js';
import { openEtcdReplication, type EtcdReplication } from '../server/etcd/etcd-replication.js';
import { AgentRoleError, type RoleFactories } from './agent-roles.js';

/** Binds the agent to the real Server and Client implementations. */
export const defaultRoles: RoleFactories = {
  async openServer(opts) {
    let etcd: EtcdReplication | undefined;
    try {
      etcd = opts.etcd ? openEtcdReplication(opts.etcd, { id: opts.name, name: opts.name, address: opts.httpAddr }, opts.logger) : undefined;
      const server = await Server.open({
        dataDir: opts.dataDir,
        region: opts.region,
        datacenter: opts.datacenter,
        numWorkers: opts.numWorkers,
        nodeName: opts.name,
        advertiseAddr: opts.httpAddr,
        logger: opts.logger,
        ...(opts.snapshotThreshold !== undefined ? { snapshotThreshold: opts.snapshotThreshold } : {}),
        ...(opts.clientIntroduction ? { clientIntroduction: opts.clientIntroduction } : {}),
        ...(opts.oidcIssuer !== undefined ? { oidcIssuer: opts.oidcIssuer } : {}),
        ...(opts.jobLimits ? { jobLimits: opts.jobLimits } : {}),
        ...(opts.heartbeat ? { heartbeat: opts.heartbeat } : {}),
        ...(etcd ? { logBackend: etcd.log, leadership: etcd.leadership } : {}),
      });
      return {
        api: server,
        // The server passes the address on to its leadership (registered in etcd).
        advertise: (addr) => server.advertise(addr),
        close: () => server.close(),
      };
    } catch (err) {
      // Server.open closed what it opened only if it got that far: release etcd either way.
      await etcd?.log.close().catch(() => undefined);
      await etcd?.leadership.close().catch(() => undefined);
      throw new AgentRoleError('server', `cannot open the server: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  },
  async startClient(opts) {
    const connection = opts.inProcess ? inProcessServerConnection(opts.inProcess) : httpServerConnection(opts.servers ?? [], undefined, opts.tls);
    try {
      const client = await Client.start({
        dataDir: opts.dataDir,
        connection,
        nodeName: opts.nodeName,
        datacenter: opts.datacenter,
        region: opts.region,
        httpAddr: opts.httpAddr,
        nodeClass: opts.nodeClass,
        ...(opts.nodePool !== undefined ? { nodePool: opts.nodePool } : {}),
        ...(opts.introToken !== undefined ? { introToken: opts.introToken } : {}),
        meta: opts.meta,
        options: opts.options,
        plugins: opts.plugins,
        ...(opts.chrootEnv ? { chrootEnv: opts.chrootEnv } : {}),
        ...(opts.network ? { network: opts.network } : {}),
        ...(opts.hostVolumes ? { hostVolumes: opts.hostVolumes } : {}),
        ...(opts.taskApi ? { taskApi: opts.taskApi } : {}),
        ...(opts.hostVolumesDir ? { hostVolumesDir: opts.hostVolumesDir } : {}),
        ...(opts.hostVolumePluginDir ? { hostVolumePluginDir: opts.hostVolumePluginDir } : {}),
        logger: opts.logger,
      });
      return { http: client, shutdown: (o) => client.shutdown(o) };
    } catch (err) {
      throw new AgentRoleError('client', `cannot start the client: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  },
};
