/**
 * Dynamic node metadata (Nomad's `/v1/client/metadata`, `nomad node meta apply`): keys set or
 * unset through the API on top of the agent's static `client { meta { … } }`. A dynamic value of
 * null unsets the key, hiding a static value of that name too. The dynamic map is kept in the
 * client's state DB, so it survives an agent restart, and the node is registered again with the
 * merged map so that constraints on `${meta.…}` see it.
 */
import { ClientApiError, ClientApiErrorCode } from '../../http/client-api-error.js';
import type { ClientStateStore } from '../state/state-db.js';

/** Nomad's NodeMetaResponse. */
export interface NodeMetaResponse {
  /** Static and dynamic merged: what the node carries. */
  Meta: Record<string, string>;
  Dynamic: Record<string, string | null>;
  Static: Record<string, string>;
}

const STATE_KEY = 'dynamic_node_meta';

/** Nomad's rule for meta keys: not empty, no whitespace, no `"` or `=`, at most 128 bytes of letters, digits and `._-/` . */
const KEY_PATTERN = /^[A-Za-z0-9_.\-/]{1,128}$/;

/** The dynamic metadata stored in the state DB (empty when none was ever applied). */
export function loadDynamicMeta(store: ClientStateStore): Record<string, string | null> {
  const raw = store.getMeta(STATE_KEY);
  if (!raw) return {};
  try {
    const parsed = JSON.parse(raw) as unknown;
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string | null>) : {};
  } catch {
    return {};
  }
}

/**
 * Checks a NodeMetaApplyRequest's Meta (string or null values, keys by Nomad's rule) and returns
 * the new dynamic map; throws CLIENT_META_INVALID naming the bad key, changing nothing.
 */
export function applyMetaChanges(dynamic: Record<string, string | null>, changes: unknown): Record<string, string | null> {
  if (changes === null || typeof changes !== 'object' || Array.isArray(changes)) {
    throw new ClientApiError(ClientApiErrorCode.MetaInvalid, 'Meta must be an object of key → string or null');
  }
  const entries = Object.entries(changes as Record<string, unknown>);
  if (entries.length === 0) throw new ClientApiError(ClientApiErrorCode.MetaInvalid, 'Meta must set or unset at least one key');
  const out = { ...dynamic };
  for (const [k, v] of entries) {
    if (!KEY_PATTERN.test(k)) throw new ClientApiError(ClientApiErrorCode.MetaInvalid, `invalid meta key ${JSON.stringify(k)}: want 1-128 letters, digits or . _ - /`);
    if (v !== null && typeof v !== 'string') throw new ClientApiError(ClientApiErrorCode.MetaInvalid, `meta key ${JSON.stringify(k)}: value must be a string or null`);
    out[k] = v;
  }
  return out;
}

/** Stores the dynamic map (durably, in the state DB). */
export function saveDynamicMeta(store: ClientStateStore, dynamic: Record<string, string | null>): void {
  store.putMeta(STATE_KEY, JSON.stringify(dynamic));
}

/** The node's metadata: static overlaid by dynamic, null removing a key. */
export function mergedMeta(staticMeta: Record<string, string>, dynamic: Record<string, string | null>): NodeMetaResponse {
  const meta: Record<string, string> = { ...staticMeta };
  for (const [k, v] of Object.entries(dynamic)) {
    if (v === null) delete meta[k];
    else meta[k] = v;
  }
  return { Meta: meta, Dynamic: { ...dynamic }, Static: { ...staticMeta } };
}
