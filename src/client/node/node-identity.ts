/**
 * The node's stable identity: an ID and a secret generated once and kept in
 * `<dataDir>/client/node-id` (and `secret-id`), so a restarted agent is the same node.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateId } from '../../structs/ids.js';

/** The node's ID and secret. */
export interface NodeIdentity {
  id: string;
  secretId: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Reads the persisted identity, creating it on first use. */
export function loadNodeIdentity(dataDir: string): NodeIdentity {
  const dir = join(dataDir, 'client');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return { id: readOrCreate(join(dir, 'node-id')), secretId: readOrCreate(join(dir, 'secret-id')) };
}

function readOrCreate(path: string): string {
  try {
    const v = readFileSync(path, 'utf8').trim();
    if (UUID.test(v)) return v;
  } catch {
    // not there yet
  }
  const id = generateId();
  writeFileSync(path, id + '\n', { mode: 0o600 });
  return id;
}
