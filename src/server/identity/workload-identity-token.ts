/**
 * Workload identity JWTs: minting with the keyring's active RSA key (RS256, Nomad's claims) and
 * verifying against any key of the keyring, both pure — the time and the token's ID come in as
 * arguments. Verification trusts nothing of a token before its signature checks out: the header
 * must say RS256 and name a key the keyring holds (no `alg: none`, no HMAC, so a public key can
 * never be used as an HMAC secret), and only then are the claims read.
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { CaravanError } from '../../structs/caravan-error.js';
import { ROOT_KEY_ALGORITHM, type RootKey } from '../../structs/root-key.js';
import { decodeJwtObject, looksLikeJwt } from '../jwt/jwt-parts.js';

/** Why a token failed to verify (the `reason` of WORKLOAD_IDENTITY_INVALID). */
export const WorkloadTokenProblem = {
  Malformed: 'is malformed',
  Algorithm: 'uses an unsupported signing algorithm (want RS256)',
  UnknownKey: 'was signed with a key this cluster does not hold',
  Signature: 'has an invalid signature',
  Expired: 'has expired',
  NotYetValid: 'is not valid yet',
  NotWorkload: 'is not a workload identity',
  AllocationGone: 'belongs to an allocation that does not exist or has stopped',
} as const;
export type WorkloadTokenProblem = (typeof WorkloadTokenProblem)[keyof typeof WorkloadTokenProblem];

/** A token that does not verify. The message never holds the token. */
export class WorkloadTokenError extends CaravanError<'WORKLOAD_IDENTITY_INVALID'> {
  constructor(readonly problem: WorkloadTokenProblem) {
    super('WORKLOAD_IDENTITY_INVALID', { reason: problem });
    this.name = 'WorkloadTokenError';
  }
}

/** The claims of a workload identity, with Nomad's names. Times are Unix seconds. */
export interface WorkloadClaims {
  aud: string | string[];
  iat: number;
  nbf: number;
  /** Absent for an identity without a TTL (Nomad's default identity never expires). */
  exp?: number;
  jti: string;
  /** `<region>:<namespace>:<job>:<group>:<task>:<identity>`, as Nomad's subject. */
  sub: string;
  iss?: string;
  nomad_namespace: string;
  /** The parent's ID for a dispatched or periodic child, as Nomad's GetIDForWorkloadIdentity. */
  nomad_job_id: string;
  nomad_allocation_id: string;
  nomad_task: string;
}

/** What one token is minted for. */
export interface MintWorkloadInput {
  region: string;
  namespace: string;
  jobId: string;
  group: string;
  allocId: string;
  task: string;
  identity: string;
  audience: string[];
  /** 0: no expiry. */
  ttlMs: number;
  /** Wall-clock ms. */
  nowMs: number;
  /** A unique ID (the `jti`). */
  tokenId: string;
  /** The server's `oidc_issuer` ("" for none: no `iss` claim, as Nomad). */
  issuer: string;
}

/**
 * How far a token's `nbf`/`iat` may lie ahead of this server's clock: the signing server's clock
 * may run a little ahead of the one that checks. Expiry gets no such grace.
 */
const NOT_BEFORE_LEEWAY_S = 60;

// KeyObjects parsed once per key: signing and verifying run on every request.
const privateKeys = new Map<string, KeyObject>();
const publicKeys = new Map<string, KeyObject>();

function privateKeyOf(key: RootKey): KeyObject {
  let k = privateKeys.get(key.KeyID);
  if (!k) privateKeys.set(key.KeyID, (k = createPrivateKey(key.PrivateKey)));
  return k;
}

/** The public half of `key` as a KeyObject (cached by KeyID). */
export function publicKeyOf(key: Pick<RootKey, 'KeyID' | 'PublicKey'>): KeyObject {
  let k = publicKeys.get(key.KeyID);
  if (!k) publicKeys.set(key.KeyID, (k = createPublicKey(key.PublicKey)));
  return k;
}

const b64json = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');

/** Mints a token signed with `key` (the keyring's active key). */
export function mintWorkloadToken(key: RootKey, input: MintWorkloadInput): { jwt: string; claims: WorkloadClaims } {
  const now = Math.floor(input.nowMs / 1000);
  const claims: WorkloadClaims = {
    // One audience is a string, as Go's JWT libraries write it.
    aud: input.audience.length === 1 ? input.audience[0]! : [...input.audience],
    iat: now,
    nbf: now,
    ...(input.ttlMs > 0 ? { exp: now + Math.max(1, Math.ceil(input.ttlMs / 1000)) } : {}),
    jti: input.tokenId,
    sub: [input.region, input.namespace, input.jobId, input.group, input.task, input.identity].join(':'),
    ...(input.issuer !== '' ? { iss: input.issuer } : {}),
    nomad_namespace: input.namespace,
    nomad_job_id: input.jobId,
    nomad_allocation_id: input.allocId,
    nomad_task: input.task,
  };
  const signingInput = `${b64json({ alg: ROOT_KEY_ALGORITHM, kid: key.KeyID, typ: 'JWT' })}.${b64json(claims)}`;
  const signature = sign('sha256', Buffer.from(signingInput), privateKeyOf(key));
  return { jwt: `${signingInput}.${signature.toString('base64url')}`, claims };
}

function decodePart(part: string): Record<string, unknown> {
  const v = decodeJwtObject(part);
  if (!v) throw new WorkloadTokenError(WorkloadTokenProblem.Malformed);
  return v;
}

/**
 * Verifies `token` against `keyOf` (the keyring by KeyID, any state: a rotated key still
 * verifies what it signed) at wall-clock `nowMs`, and answers its claims; throws
 * WorkloadTokenError naming the problem.
 */
export function verifyWorkloadToken(keyOf: (kid: string) => RootKey | undefined, token: string, nowMs: number): WorkloadClaims {
  if (!looksLikeJwt(token)) throw new WorkloadTokenError(WorkloadTokenProblem.Malformed);
  const [h, p, s] = token.split('.') as [string, string, string];
  const header = decodePart(h);
  if (header['alg'] !== ROOT_KEY_ALGORITHM) throw new WorkloadTokenError(WorkloadTokenProblem.Algorithm);
  const kid = header['kid'];
  const key = typeof kid === 'string' ? keyOf(kid) : undefined;
  if (!key) throw new WorkloadTokenError(WorkloadTokenProblem.UnknownKey);
  if (!verify('sha256', Buffer.from(`${h}.${p}`), publicKeyOf(key), Buffer.from(s, 'base64url'))) throw new WorkloadTokenError(WorkloadTokenProblem.Signature);
  const c = decodePart(p);
  const str = (k: string): string | undefined => (typeof c[k] === 'string' && c[k] !== '' ? (c[k] as string) : undefined);
  const num = (k: string): number => (typeof c[k] === 'number' && Number.isFinite(c[k]) ? (c[k] as number) : NaN);
  const ns = str('nomad_namespace');
  const job = str('nomad_job_id');
  const alloc = str('nomad_allocation_id');
  const task = str('nomad_task');
  const sub = str('sub');
  const jti = str('jti');
  if (ns === undefined || job === undefined || alloc === undefined || task === undefined || sub === undefined || jti === undefined) {
    throw new WorkloadTokenError(WorkloadTokenProblem.NotWorkload);
  }
  const iat = num('iat');
  const nbf = num('nbf');
  const exp = c['exp'] === undefined ? undefined : num('exp');
  if (Number.isNaN(iat) || Number.isNaN(nbf) || (exp !== undefined && Number.isNaN(exp))) throw new WorkloadTokenError(WorkloadTokenProblem.Malformed);
  const now = nowMs / 1000;
  if (exp !== undefined && now >= exp) throw new WorkloadTokenError(WorkloadTokenProblem.Expired);
  if (nbf > now + NOT_BEFORE_LEEWAY_S || iat > now + NOT_BEFORE_LEEWAY_S) throw new WorkloadTokenError(WorkloadTokenProblem.NotYetValid);
  const aud = c['aud'];
  return {
    aud: Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : typeof aud === 'string' ? aud : [],
    iat,
    nbf,
    ...(exp !== undefined ? { exp } : {}),
    jti,
    sub,
    ...(str('iss') !== undefined ? { iss: str('iss')! } : {}),
    nomad_namespace: ns,
    nomad_job_id: job,
    nomad_allocation_id: alloc,
    nomad_task: task,
  };
}

/** The JWK of a key's public half (RFC 7517), as Nomad's JWKS lists it; built from the public key only. */
export function publicJwk(key: Pick<RootKey, 'KeyID' | 'PublicKey'>): { kty: string; n: string; e: string; kid: string; alg: string; use: string } {
  const jwk = publicKeyOf(key).export({ format: 'jwk' });
  return { kty: String(jwk.kty), n: String(jwk.n), e: String(jwk.e), kid: key.KeyID, alg: ROOT_KEY_ALGORITHM, use: 'sig' };
}
