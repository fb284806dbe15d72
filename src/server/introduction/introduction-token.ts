/**
 * Introduction tokens as JWTs (HS256) signed with the cluster's introduction key: minting and
 * verifying, both pure — the time and the token's ID come in as arguments, so tests control
 * expiry with a FakeClock. Nomad signs its tokens with the keyring's RSA keys (RS256); only
 * servers ever check these, and they share the key through the replicated state, so an HMAC
 * does the same job without a key pair. The claims and their names are Nomad's.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { CaravanError } from '../../structs/caravan-error.js';
import { INTRODUCTION_AUDIENCE, type IntroductionClaims, type IntroductionSigningKey } from '../../structs/client-introduction.js';
import { decodeJwtObject, looksLikeJwt } from '../jwt/jwt-parts.js';

/** Why a token failed to verify (the `reason` of INTRODUCTION_TOKEN_INVALID). */
export const IntroductionTokenProblem = {
  Malformed: 'is malformed',
  Algorithm: 'uses an unsupported signing algorithm',
  UnknownKey: 'was signed with a key this cluster does not hold',
  Signature: 'has an invalid signature',
  Expired: 'has expired',
  NotYetValid: 'is not valid yet',
  NotIntroduction: 'is not a client introduction token',
} as const;
export type IntroductionTokenProblem = (typeof IntroductionTokenProblem)[keyof typeof IntroductionTokenProblem];

/** A token that does not verify. The message never holds the token. */
export class IntroductionTokenError extends CaravanError<'INTRODUCTION_TOKEN_INVALID'> {
  constructor(readonly problem: IntroductionTokenProblem) {
    super('INTRODUCTION_TOKEN_INVALID', { reason: problem });
    this.name = 'IntroductionTokenError';
  }
}

/** The subject prefix of Nomad's introduction identities. */
const SUBJECT_PREFIX = 'node-introduction:';
/**
 * How far a token's `nbf`/`iat` may lie ahead of this server's clock: the minting server's
 * clock may run a little ahead of the one that checks. Expiry gets no such grace.
 */
const NOT_BEFORE_LEEWAY_S = 60;

/** What a token is minted for. */
export interface MintInput {
  region: string;
  /** "" binds no name. */
  nodeName: string;
  nodePool: string;
  ttlMs: number;
  /** Wall-clock ms. */
  nowMs: number;
  /** A unique ID (the `jti`). */
  tokenId: string;
}

const b64url = (b: Buffer): string => b.toString('base64url');

function signature(key: IntroductionSigningKey, signingInput: string): Buffer {
  return createHmac('sha256', Buffer.from(key.Key, 'base64')).update(signingInput).digest();
}

/** Mints a token: `header.claims.signature`, base64url, signed with `key`. */
export function mintIntroductionToken(key: IntroductionSigningKey, input: MintInput): string {
  const now = Math.floor(input.nowMs / 1000);
  const claims: IntroductionClaims = {
    aud: INTRODUCTION_AUDIENCE,
    exp: now + Math.max(1, Math.ceil(input.ttlMs / 1000)),
    iat: now,
    nbf: now,
    jti: input.tokenId,
    sub: `${SUBJECT_PREFIX}${input.region}:${input.nodePool}:${input.nodeName}:default`,
    nomad_node_pool: input.nodePool,
    nomad_node_name: input.nodeName,
  };
  const header = { alg: 'HS256', kid: key.KeyID, typ: 'JWT' };
  const signingInput = `${b64url(Buffer.from(JSON.stringify(header)))}.${b64url(Buffer.from(JSON.stringify(claims)))}`;
  return `${signingInput}.${b64url(signature(key, signingInput))}`;
}

function decodePart(part: string): Record<string, unknown> {
  const v = decodeJwtObject(part);
  if (!v) throw new IntroductionTokenError(IntroductionTokenProblem.Malformed);
  return v;
}

/**
 * Verifies `token` against the cluster's key at wall-clock `nowMs` and answers its claims;
 * throws IntroductionTokenError naming the problem. The signature is checked before any claim
 * is trusted, and only HS256 under the cluster's current key is accepted (no `alg: none`).
 */
export function verifyIntroductionToken(key: IntroductionSigningKey | undefined, token: string, nowMs: number): IntroductionClaims {
  if (!looksLikeJwt(token)) throw new IntroductionTokenError(IntroductionTokenProblem.Malformed);
  const [h, p, s] = token.split('.') as [string, string, string];
  const header = decodePart(h);
  if (header['alg'] !== 'HS256') throw new IntroductionTokenError(IntroductionTokenProblem.Algorithm);
  if (!key || header['kid'] !== key.KeyID) throw new IntroductionTokenError(IntroductionTokenProblem.UnknownKey);
  const expected = signature(key, `${h}.${p}`);
  const given = Buffer.from(s, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new IntroductionTokenError(IntroductionTokenProblem.Signature);
  const c = decodePart(p);
  const num = (k: string): number => (typeof c[k] === 'number' && Number.isFinite(c[k]) ? (c[k] as number) : NaN);
  const str = (k: string): string | undefined => (typeof c[k] === 'string' ? (c[k] as string) : undefined);
  const claims = {
    aud: str('aud'),
    exp: num('exp'),
    iat: num('iat'),
    nbf: num('nbf'),
    jti: str('jti'),
    sub: str('sub'),
    nomad_node_pool: str('nomad_node_pool'),
    nomad_node_name: str('nomad_node_name'),
  };
  if (claims.aud !== INTRODUCTION_AUDIENCE || !claims.sub?.startsWith(SUBJECT_PREFIX) || claims.nomad_node_pool === undefined || claims.nomad_node_name === undefined || claims.jti === undefined) {
    throw new IntroductionTokenError(IntroductionTokenProblem.NotIntroduction);
  }
  if (Number.isNaN(claims.exp) || Number.isNaN(claims.nbf) || Number.isNaN(claims.iat)) throw new IntroductionTokenError(IntroductionTokenProblem.Malformed);
  const now = nowMs / 1000;
  if (now >= claims.exp) throw new IntroductionTokenError(IntroductionTokenProblem.Expired);
  if (claims.nbf > now + NOT_BEFORE_LEEWAY_S || claims.iat > now + NOT_BEFORE_LEEWAY_S) throw new IntroductionTokenError(IntroductionTokenProblem.NotYetValid);
  return claims as IntroductionClaims;
}
