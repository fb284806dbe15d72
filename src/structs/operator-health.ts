/**
 * Nomad's OperatorHealthReply (`GET /v1/operator/autopilot/health`): each server's health from
 * the leader's view and the cluster's summary (community edition fields only).
 */

/** Nomad's api.ServerHealth. */
export interface ServerHealth {
  ID: string;
  Name: string;
  Address: string;
  SerfStatus: string;
  Version: string;
  Leader: boolean;
  /** A Go duration string. */
  LastContact: string;
  LastTerm: number;
  LastIndex: number;
  Healthy: boolean;
  Voter: boolean;
  /** RFC 3339, to the second: when Healthy last changed (as this server has seen it). */
  StableSince: string;
}

/** Nomad's api.OperatorHealthReply (community edition fields). */
export interface OperatorHealthReply {
  Healthy: boolean;
  FailureTolerance: number;
  Servers: ServerHealth[];
  Leader: string;
  Voters: string[];
}
