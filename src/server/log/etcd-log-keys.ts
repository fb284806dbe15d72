/**
 * Where the etcd log backend keeps things under its cluster prefix, and how an entry is
 * encoded. Indexes are zero-padded to 20 digits so etcd's byte order is index order and a
 * range [key(a), key(b+1)) holds exactly the entries a..b.
 *
 *   <prefix>log/e/<index>            an entry: "I<type>\n<payload>", or "P<parts>\n<type>"
 *   <prefix>log/p/<index>/<part>     the parts of an entry too large for one etcd request
 *   <prefix>log/w                    nonce of the last index transaction
 *   <prefix>log/compacted            entries up to this index were compacted away
 *   <prefix>snap/latest              the committed snapshot: {"index","id","pieces"}
 *   <prefix>snap/c/<id>/<piece>      its pieces (a flag byte, then up to PIECE_BYTES of data)
 *   <prefix>election/<lease ID>      a candidate (with that lease); the one with the lowest create
 *                                    revision leads, and its create revision fences appends
 *   <prefix>members/<id>             a registered server (with its lease)
 */

/** What proves this server is the leader: its candidate key and that key's create revision. */
export interface EtcdFence {
  key: string;
  createRevision: string;
}

export const INDEX_DIGITS = 20;

/**
 * etcd refuses requests over --max-request-bytes (1.5 MiB by default) and transactions with
 * more than --max-txn-ops (128) operations. Writes stay below both: an entry larger than
 * INLINE_MAX_BYTES goes into parts of PART_BYTES, written before its index key, and a
 * transaction holds at most TXN_MAX_BYTES of values and TXN_MAX_OPS puts. (A plan placing a
 * thousand allocations is a few hundred KiB: inline, one transaction.)
 */
export const PART_BYTES = 1024 * 1024;
export const INLINE_MAX_BYTES = 1024 * 1024;
/** Leaves a quarter MiB of the 1.5 MiB request for keys, compares and framing. */
export const TXN_MAX_BYTES = 1280 * 1024;
export const TXN_MAX_OPS = 100;
/** Snapshot data per key (each piece is one put). */
export const PIECE_BYTES = 1024 * 1024;
/** Entries per range read: bounded responses (gRPC's receive limit) without many round trips. */
export const READ_PAGE = 256;

export function pad(n: number, digits = INDEX_DIGITS): string {
  return String(n).padStart(digits, '0');
}

/** The keys of one cluster prefix. */
export class EtcdLogKeys {
  readonly entries: string;
  /** The end of the entries' key range (the byte after "log/e/"). */
  readonly entriesEnd: string;
  /** The nonce of the last index transaction (tells a retried one that it already committed). */
  readonly writeMarker: string;
  readonly parts: string;
  readonly compacted: string;
  readonly snapLatest: string;
  readonly snapChunks: string;
  /** The election prefix: one candidate key per server lease; the lowest create revision leads. */
  readonly election: string;
  readonly members: string;

  constructor(readonly prefix: string) {
    const p = prefix.endsWith('/') ? prefix : `${prefix}/`;
    this.entries = `${p}log/e/`;
    this.entriesEnd = `${p}log/e0`;
    this.writeMarker = `${p}log/w`;
    this.parts = `${p}log/p/`;
    this.compacted = `${p}log/compacted`;
    this.snapLatest = `${p}snap/latest`;
    this.snapChunks = `${p}snap/c/`;
    this.election = `${p}election/`;
    this.members = `${p}members/`;
  }

  entry(index: number): string {
    return this.entries + pad(index);
  }

  /** The index of an entry key, or NaN for a key that is not one. */
  indexOf(key: string): number {
    return key.startsWith(this.entries) ? Number(key.slice(this.entries.length)) : NaN;
  }

  partsOf(index: number): string {
    return `${this.parts}${pad(index)}/`;
  }

  part(index: number, n: number): string {
    return this.partsOf(index) + pad(n, 6);
  }

  snapshotPieces(id: string): string {
    return `${this.snapChunks}${id}/`;
  }

  snapshotPiece(id: string, n: number): string {
    return this.snapshotPieces(id) + pad(n, 8);
  }
}

/** An entry value: inline, or a header naming how many parts hold its payload. */
export type EncodedEntry = { inline: Buffer } | { header: Buffer; parts: Buffer[] };

/** Encodes an entry for its key; a payload too large for one request is cut into parts. */
export function encodeEntry(type: string, payload: string): EncodedEntry {
  const body = Buffer.from(payload, 'utf8');
  if (body.length + type.length + 2 <= INLINE_MAX_BYTES) return { inline: Buffer.concat([Buffer.from(`I${type}\n`, 'utf8'), body]) };
  const parts: Buffer[] = [];
  for (let off = 0; off < body.length; off += PART_BYTES) parts.push(body.subarray(off, off + PART_BYTES));
  return { header: Buffer.from(`P${parts.length}\n${type}`, 'utf8'), parts };
}

/** A decoded entry value: complete, or the number of parts to fetch. */
export type DecodedEntry = { type: string; payload: string } | { type: string; parts: number };

export function decodeEntry(value: Buffer): DecodedEntry {
  const nl = value.indexOf(0x0a);
  if (nl < 1) throw new Error('malformed log entry value');
  const kind = value[0];
  if (kind === 0x49 /* I */) return { type: value.subarray(1, nl).toString('utf8'), payload: value.subarray(nl + 1).toString('utf8') };
  if (kind === 0x50 /* P */) return { type: value.subarray(nl + 1).toString('utf8'), parts: Number(value.subarray(1, nl).toString('utf8')) };
  throw new Error('malformed log entry value');
}
