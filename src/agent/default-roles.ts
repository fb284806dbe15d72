/**
 * The real roles: Server (src/server/server.ts) and Client (src/client/client.ts). A client in
 * the same process as its server talks to it in-process; otherwise over HTTP to `servers`.
 */
import { Client } from '../client/client.js';
import { httpServerConnection, inProcessServerConnection } from '../client/server-connection.js';
import { Server } from '../server/server.js';
import { AgentRoleError, type RoleFactories } from './agent-roles.js';

/** Binds the agent to the real Server and Client implementations. */
export const defaultRoles: RoleFactories = {
  async openServer(opts) {
    try {
      const server = await Server.open({
        dataDir: opts.dataDir,
        region: opts.region,
        datacenter: opts.datacenter,
        numWorkers: opts.numWorkers,
        logger: opts.logger,
      });
      return { api: server, advertise: (addr) => server.advertise(addr), close: () => server.close() };
    } catch (err) {
      throw new AgentRoleError('server', `cannot open the server: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  },
  async startClient(opts) {
    const connection = opts.inProcess ? inProcessServerConnection(opts.inProcess) : httpServerConnection(opts.servers ?? []);
    try {
      const client = await Client.start({
        dataDir: opts.dataDir,
        connection,
        nodeName: opts.nodeName,
        datacenter: opts.datacenter,
        region: opts.region,
        httpAddr: opts.httpAddr,
        nodeClass: opts.nodeClass,
        meta: opts.meta,
        options: opts.options,
        plugins: opts.plugins,
        ...(opts.chrootEnv ? { chrootEnv: opts.chrootEnv } : {}),
        logger: opts.logger,
      });
      return { http: client, shutdown: (o) => client.shutdown(o) };
    } catch (err) {
      throw new AgentRoleError('client', `cannot start the client: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  },
};
