/**
 * Whether a new node's registration is admitted, from the server's enforcement level, what the
 * client presented and the node it registers — pure, so each case is a table row in tests.
 * Nomad's NewRegistrationAllowed, with one choice of ours: a token that is presented must be
 * valid and match under "warn" too (Nomad's servers refuse an invalid one there as well, in
 * authentication); "warn" only admits a registration that presents none. Only new nodes come
 * here: a registered node authenticates with its SecretID.
 */
import { IntroductionEnforcement, type IntroductionClaims } from '../../structs/client-introduction.js';

/** What the client presented: nothing, a token that verified, or one that did not. */
export type PresentedIntroduction =
  | { kind: 'none' }
  | { kind: 'valid'; claims: IntroductionClaims }
  | { kind: 'invalid'; problem: string };

/** The node as the verdict needs it. */
export interface IntroducedNode {
  ID: string;
  Name: string;
  NodePool: string;
}

/** The decision, with what the server logs about it (never the token). */
export interface IntroductionVerdict {
  allowed: boolean;
  /** Why a registration is refused or warned about, for the client's error and the log. */
  reason?: string;
  /** The log line: Nomad's message and fields; absent when there is nothing to say. */
  log?: { level: 'warn' | 'error'; message: string; fields: Record<string, string> };
}

/** Decides a new node's registration (see the file comment). */
export function introductionVerdict(enforcement: IntroductionEnforcement, presented: PresentedIntroduction, node: IntroducedNode): IntroductionVerdict {
  if (enforcement === IntroductionEnforcement.None) return { allowed: true };
  const fields: Record<string, string> = { enforcement_level: enforcement, node_id: node.ID, node_pool: node.NodePool, node_name: node.Name };
  const refuse = (message: string, reason: string, extra: Record<string, string> = {}): IntroductionVerdict => ({
    allowed: false,
    reason,
    log: { level: 'error', message, fields: { ...fields, ...extra } },
  });
  switch (presented.kind) {
    case 'none': {
      const reason = `no introduction token (client_introduction enforcement is "${enforcement}")`;
      const log = { message: 'node registration without introduction token', fields };
      return enforcement === IntroductionEnforcement.Strict ? { allowed: false, reason, log: { level: 'error', ...log } } : { allowed: true, reason, log: { level: 'warn', ...log } };
    }
    case 'invalid':
      return refuse('node registration introduction authentication failure', `introduction token ${presented.problem}`, { error: presented.problem });
    case 'valid': {
      const c = presented.claims;
      const claimFields = { claim_node_pool: c.nomad_node_pool, claim_node_name: c.nomad_node_name };
      if (c.nomad_node_pool !== node.NodePool) {
        return refuse('node registration introduction claims mismatch', `the introduction token is for node pool "${c.nomad_node_pool}", not "${node.NodePool}"`, claimFields);
      }
      if (c.nomad_node_name !== '' && c.nomad_node_name !== node.Name) {
        return refuse('node registration introduction claims mismatch', `the introduction token is for node name "${c.nomad_node_name}", not "${node.Name}"`, claimFields);
      }
      return { allowed: true };
    }
    default: {
      const never: never = presented;
      return never;
    }
  }
}
