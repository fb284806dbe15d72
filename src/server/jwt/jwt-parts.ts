/**
 * The compact form of a JWT as Caravan's two token kinds read it (workload identities and
 * client introduction tokens): three base64url parts, the first two JSON objects. Each kind
 * verifies signatures and claims itself and throws its own error; these only take a token apart.
 */

/** True when `token` has a JWT's shape (three base64url parts): ACL secrets and node SecretIDs (UUIDs) never do. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/.test(token);
}

/** A JWT's header or claims part as an object, or null when it is not base64url JSON of an object. */
export function decodeJwtObject(part: string): Record<string, unknown> | null {
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
}
