/**
 * Downloads an http(s) artifact into an open file descriptor. Redirects are followed by hand
 * (at most MAX_REDIRECTS), each target checked like the source itself: a redirect to
 * `file://` or any scheme but http and https is refused, so a URL cannot be turned into a read
 * of the client host. An optional go-getter checksum (`options { checksum = "sha256:…" }`) is
 * verified over the bytes written.
 */
import { createHash, type Hash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { CaravanError } from '../../../structs/caravan-error.js';
import { ARTIFACT_URL_SCHEMES, ArtifactSourceError } from './artifact-source.js';

/** Redirects followed before giving up, as Go's http client. */
export const MAX_REDIRECTS = 10;

/** A download that failed (network, status, size, checksum); the task may be retried. */
export class ArtifactDownloadError extends CaravanError<'ARTIFACT_DOWNLOAD_FAILED'> {
  constructor(source: string, reason: string, options?: { cause?: unknown }) {
    super('ARTIFACT_DOWNLOAD_FAILED', { source: JSON.stringify(source), reason }, options);
    this.name = 'ArtifactDownloadError';
  }
}

/** How to download one artifact. */
export interface DownloadOptions {
  /** The job's artifact source, named in errors. */
  source: string;
  headers: Record<string, string>;
  /** Skip TLS verification (the artifact's `insecure`). */
  insecure: boolean;
  /** `type:hex` (md5, sha1, sha256, sha512), or undefined. */
  checksum: string | undefined;
  /** The most bytes written before the download is refused. */
  maxBytes: number;
  signal: AbortSignal;
}

const CHECKSUM_TYPES: Record<string, string> = { md5: 'md5', sha1: 'sha1', sha256: 'sha256', sha512: 'sha512' };

function checksumOf(source: string, spec: string | undefined): { hash: Hash; want: string; type: string } | undefined {
  if (spec === undefined) return undefined;
  const [type, want] = spec.trim().split(':');
  const algo = type ? CHECKSUM_TYPES[type.toLowerCase()] : undefined;
  if (!algo || !want || !/^[0-9a-fA-F]+$/.test(want)) {
    throw new ArtifactSourceError(source, `checksum must be "type:hex" with type md5, sha1, sha256 or sha512, got ${JSON.stringify(spec)}`);
  }
  return { hash: createHash(algo), want: want.toLowerCase(), type: algo };
}

/** Headers Go's client drops on a redirect to another host: credentials meant for the first one. */
const SENSITIVE_HEADERS = ['authorization', 'www-authenticate', 'cookie', 'cookie2'];

function headersFor(url: URL, start: URL, headers: Record<string, string>): Record<string, string> {
  if (url.hostname === start.hostname || url.hostname.endsWith(`.${start.hostname}`)) return headers;
  return Object.fromEntries(Object.entries(headers).filter(([k]) => !SENSITIVE_HEADERS.includes(k.toLowerCase())));
}

function get(url: URL, start: URL, opts: DownloadOptions): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method: 'GET',
      headers: headersFor(url, start, opts.headers),
      signal: opts.signal,
      ...(url.protocol === 'https:' ? { rejectUnauthorized: !opts.insecure } : {}),
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end();
  });
}

/** The response at the end of the redirects from `start`; every hop must be http or https. */
async function follow(start: URL, opts: DownloadOptions): Promise<IncomingMessage> {
  let url = start;
  for (let hop = 0; ; hop++) {
    const res = await get(url, start, opts);
    const status = res.statusCode ?? 0;
    if (status < 300 || status >= 400 || status === 304) return res;
    res.resume();
    const location = res.headers.location;
    if (!location) throw new ArtifactDownloadError(opts.source, `${url.href} answered ${status} without a Location`);
    if (hop + 1 > MAX_REDIRECTS) throw new ArtifactDownloadError(opts.source, `stopped after ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new ArtifactDownloadError(opts.source, `redirect to an invalid URL ${JSON.stringify(location)}`);
    }
    const scheme = next.protocol.slice(0, -1);
    if (!ARTIFACT_URL_SCHEMES.includes(scheme)) {
      throw new ArtifactSourceError(opts.source, `redirected to ${JSON.stringify(next.href)}: scheme "${scheme}" is not allowed`);
    }
    url = next;
  }
}

/**
 * Downloads `url` into `fd` (already open for writing). Throws ArtifactSourceError for a
 * refused redirect or checksum spec, ArtifactDownloadError for anything retrying may fix.
 * Returns the number of bytes written.
 */
export async function downloadToFd(url: URL, fd: number, opts: DownloadOptions): Promise<number> {
  const sum = checksumOf(opts.source, opts.checksum);
  let res: IncomingMessage;
  try {
    res = await follow(url, opts);
  } catch (err) {
    if (err instanceof CaravanError) throw err;
    throw new ArtifactDownloadError(opts.source, (err as Error).message, { cause: err });
  }
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    res.resume();
    throw new ArtifactDownloadError(opts.source, `bad response code: ${status}`);
  }
  let written = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      written += chunk.length;
      if (written > opts.maxBytes) throw new ArtifactDownloadError(opts.source, `larger than the limit of ${opts.maxBytes} bytes`);
      sum?.hash.update(chunk);
      for (let off = 0; off < chunk.length; ) off += writeSync(fd, chunk, off);
    }
  } catch (err) {
    res.destroy();
    if (err instanceof CaravanError) throw err;
    throw new ArtifactDownloadError(opts.source, (err as Error).message, { cause: err });
  }
  if (sum) {
    const got = sum.hash.digest('hex');
    if (got !== sum.want) throw new ArtifactDownloadError(opts.source, `checksums did not match: ${sum.type} expected ${sum.want}, got ${got}`);
  }
  return written;
}
