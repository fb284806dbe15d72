/**
 * Workload identities on a server: signing a task's identities for the client that runs it
 * (authenticated with its node's SecretID, for a live allocation of that node), and resolving an
 * identity presented as an API token into the workload it names. Any server may do either: the
 * keyring is replicated state. Only a first key is made through the leader (KeyringEndpoint).
 */
import { randomUUID } from 'node:crypto';
import type { Allocation } from '../../structs/alloc.js';
import { isTerminalAlloc } from '../../structs/alloc.js';
import { admitSignIdentitiesRequest, type SignedIdentity } from '../../structs/signed-identity.js';
import { DEFAULT_IDENTITY_AUDIENCE, taskIdentities } from '../../structs/workload-identity.js';
import type { WorkloadClaim } from '../../acl/workload-variables.js';
import { ServerError } from '../server-error.js';
import { mintWorkloadToken, verifyWorkloadToken, WorkloadTokenError, WorkloadTokenProblem } from '../identity/workload-identity-token.js';
import { authenticateNode } from './node-endpoint.js';
import type { EndpointContext } from './endpoint-context.js';
import type { KeyringEndpoint } from './keyring-endpoint.js';

/** A workload identity that verified: the workload it names and when it stops being valid. */
export interface ResolvedWorkload {
  claim: WorkloadClaim;
  allocId: string;
  /** Wall-clock ms the token expires (undefined: it does not). */
  expiresAtMs?: number;
}

/** Signing and resolving workload identities. */
export class WorkloadIdentityEndpoint {
  constructor(
    private readonly ctx: EndpointContext,
    private readonly keyring: KeyringEndpoint,
  ) {}

  /**
   * Signs the identities of one task of an allocation of the calling node. A terminal or
   * unknown allocation, or another node's, is refused as a wrong secret is.
   */
  async sign(raw: unknown, secretId: string): Promise<SignedIdentity[]> {
    const req = admitSignIdentitiesRequest(raw);
    const alloc = this.ctx.store.allocById(req.AllocID);
    const node = alloc ? this.ctx.store.nodeById(alloc.NodeID) : undefined;
    if (!alloc || !node) throw new ServerError('NODE_SECRET_MISMATCH', {});
    authenticateNode(node, secretId);
    if (isTerminalAlloc(alloc)) throw new ServerError('ACL_PERMISSION_DENIED', {});
    const task = alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Tasks.find((t) => t.Name === req.Task);
    if (!task) throw new ServerError('ACL_PERMISSION_DENIED', {});
    const wanted = taskIdentities(task).filter((i) => req.Identities.length === 0 || req.Identities.includes(i.Name));
    const key = this.ctx.store.acl.activeRootKey() ?? (await this.keyring.ensureActiveKey());
    const nowMs = this.ctx.clock.now();
    return wanted.map((identity) => {
      const ttlMs = Math.floor(identity.TTL / 1e6);
      const { jwt, claims } = mintWorkloadToken(key, {
        region: this.ctx.config.region ?? 'global',
        namespace: alloc.Namespace,
        jobId: jobIdForIdentity(alloc),
        group: alloc.TaskGroup,
        allocId: alloc.ID,
        task: task.Name,
        identity: identity.Name,
        audience: identity.Audience,
        ttlMs,
        nowMs,
        tokenId: randomUUID(),
        issuer: this.ctx.config.oidcIssuer ?? '',
      });
      return { AllocID: alloc.ID, TaskName: task.Name, IdentityName: identity.Name, JWT: jwt, Expiration: claims.exp !== undefined ? claims.exp * 1e9 : 0 };
    });
  }

  /**
   * The workload a token presented to the API names; throws WorkloadTokenError when it does not
   * verify, is not meant for Nomad's API (its audience lacks nomadproject.io: a token made for a
   * third party is not replayable here), or its allocation is gone or stopped.
   */
  resolve(token: string): ResolvedWorkload {
    const acl = this.ctx.store.acl;
    const claims = verifyWorkloadToken((kid) => acl.rootKey(kid), token, this.ctx.clock.now());
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!aud.includes(DEFAULT_IDENTITY_AUDIENCE)) throw new WorkloadTokenError(WorkloadTokenProblem.NotWorkload);
    const alloc = this.ctx.store.allocById(claims.nomad_allocation_id);
    if (!alloc || isTerminalAlloc(alloc) || alloc.Namespace !== claims.nomad_namespace || jobIdForIdentity(alloc) !== claims.nomad_job_id) {
      throw new WorkloadTokenError(WorkloadTokenProblem.AllocationGone);
    }
    if (!alloc.Job?.TaskGroups.find((g) => g.Name === alloc.TaskGroup)?.Tasks.some((t) => t.Name === claims.nomad_task)) {
      throw new WorkloadTokenError(WorkloadTokenProblem.NotWorkload);
    }
    return {
      claim: { namespace: alloc.Namespace, job: claims.nomad_job_id, group: alloc.TaskGroup, task: claims.nomad_task },
      allocId: alloc.ID,
      ...(claims.exp !== undefined ? { expiresAtMs: claims.exp * 1000 } : {}),
    };
  }
}

/** The job an identity names: the parent's for a dispatched or periodic child (Nomad's GetIDForWorkloadIdentity). */
function jobIdForIdentity(alloc: Allocation): string {
  return alloc.Job?.ParentID || alloc.JobID;
}
