/**
 * The two ways an agent learns that tokens changed, for LiveAuthorizations: a server watches
 * its own state store (the ACL tables' index moves in the apply that deletes a token or
 * changes a policy or role); a client-only agent has no state and asks its servers again on a
 * short period, as it resolves tokens by asking them in the first place.
 */
import { ANONYMOUS_TOKEN } from '../../structs/acl.js';
import type { AclEndpoint } from '../../server/endpoints/acl-endpoint.js';
import type { ServerApi } from '../../server/server-api.js';
import { Table } from '../../server/state/state-reader.js';
import type { Clock } from '../../time/clock.js';
import type { TokenWatchSource } from './live-authorizations.js';
import type { RemoteTokenResolver } from './remote-token-resolver.js';

const ACL_TABLES: Table[] = [Table.AclTokens, Table.AclPolicies, Table.AclRoles];

/** How long one wait on the state store lasts before it is simply renewed. */
const STATE_WAIT_MS = 5 * 60_000;

/**
 * How often a client-only agent re-resolves the tokens of its live connections: a deletion is
 * seen within this period plus one round trip to a server, inside Caravan's promise of a second.
 */
export const CLIENT_TOKEN_RECHECK_MS = 500;

/** A server's source: its state store's ACL tables, and its own resolution of secrets. */
export function stateTokenSource(server: ServerApi, acl: AclEndpoint): TokenWatchSource {
  const index = (): number => ACL_TABLES.reduce((m, t) => Math.max(m, server.state.tableIndex(t)), 0);
  return {
    resolve: (secret) => acl.resolve(secret),
    cursor: index,
    next: (cursor, signal) => server.waitForChange(ACL_TABLES, cursor, STATE_WAIT_MS, signal),
    exists: (secret) => secret === '' || secret === ANONYMOUS_TOKEN.SecretID || acl.secretExists(secret),
  };
}

/** A client-only agent's source: its servers, asked again every `periodMs`. */
export function polledTokenSource(resolver: RemoteTokenResolver, clock: Clock, periodMs = CLIENT_TOKEN_RECHECK_MS): TokenWatchSource {
  return {
    resolve: (secret) => resolver.refresh(secret),
    cursor: () => 0,
    next: async (cursor, signal) => {
      await clock.sleep(periodMs, signal).catch(() => undefined);
      return cursor + 1;
    },
  };
}
