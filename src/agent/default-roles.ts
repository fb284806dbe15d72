/**
 * The real roles: Server (src/server/server.ts) and Client (src/client/client.ts).
 */
import { AgentRoleError, type RoleFactories } from './agent-roles.js';

/** Binds the agent to the real Server and Client implementations. */
export const defaultRoles: RoleFactories = {
  async openServer() {
    throw new AgentRoleError('server', 'the server role is not available in this build yet');
  },
  async startClient() {
    throw new AgentRoleError('client', 'the client role is not available in this build yet');
  },
};
