/**
 * The states of a node's drain as Node.LastDrain reports them (Nomad's DrainMetadata): set and
 * running, cancelled by an operator, or completed by the drainer.
 */

/** Drain states. */
export const DrainStatus = {
  Draining: 'draining',
  Canceled: 'canceled',
  Complete: 'complete',
} as const;
export type DrainStatus = (typeof DrainStatus)[keyof typeof DrainStatus];

/** Node.LastDrain: the last drain of a node (times RFC 3339). */
export interface DrainMetadata {
  StartedAt: string;
  UpdatedAt: string;
  Status: DrainStatus;
  AccessorID: string;
  Meta: Record<string, string> | null;
}
