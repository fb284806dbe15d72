/** Identifiers: Nomad uses random UUIDs for allocations, evaluations, nodes and deployments. */
import { randomUUID } from 'node:crypto';

/** A new random UUID (version 4), as Nomad's IDs. */
export function generateId(): string {
  return randomUUID();
}

/** The first 8 characters of an ID, as Nomad's CLI shows them. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}
