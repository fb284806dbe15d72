/**
 * Calls to the agent's HTTP API from the browser: the token (X-Nomad-Token, kept in
 * localStorage), the selected namespace, and errors that carry the API's own message.
 */

const TOKEN_KEY = 'caravan.token';
const NAMESPACE_KEY = 'caravan.namespace';

/** The ACL token the UI sends, '' for none. */
export function getToken(): string {
  return localStorage.getItem(TOKEN_KEY) ?? '';
}

export function setToken(token: string): void {
  if (token === '') localStorage.removeItem(TOKEN_KEY);
  else localStorage.setItem(TOKEN_KEY, token);
  setForbidden(false);
}

/**
 * Whether a read was refused (403) since the token last changed: the header then says so
 * instead of "Live", and points to the sign-in page.
 */
let forbidden = false;
const forbiddenListeners = new Set<(f: boolean) => void>();

export function wasForbidden(): boolean {
  return forbidden;
}

export function onForbidden(fn: (f: boolean) => void): () => void {
  forbiddenListeners.add(fn);
  return () => forbiddenListeners.delete(fn);
}

function setForbidden(f: boolean): void {
  if (forbidden === f) return;
  forbidden = f;
  for (const fn of forbiddenListeners) fn(f);
}

/** A 403: the token may not do this (or is unknown or expired); retrying will not change that. */
export function isForbidden(err: unknown): boolean {
  return err instanceof ApiError && err.status === 403;
}

/** The namespace lists and pages are scoped to ('*' = all). */
export function getNamespace(): string {
  return localStorage.getItem(NAMESPACE_KEY) ?? 'default';
}

export function setNamespace(ns: string): void {
  localStorage.setItem(NAMESPACE_KEY, ns);
}

/** An answer other than 2xx: the status and the API's plain-text message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly path: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** Headers every API call carries. */
export function apiHeaders(extra: Record<string, string> = {}): Record<string, string> {
  const token = getToken();
  return token ? { 'X-Nomad-Token': token, ...extra } : extra;
}

/** fetch() against the API; throws ApiError (with the body's text) on a non-2xx answer. */
export async function apiFetch(path: string, init: RequestInit = {}): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(path, { ...init, headers: apiHeaders((init.headers as Record<string, string> | undefined) ?? {}) });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, path, `cannot reach the agent: ${(err as Error).message}`);
  }
  if (!res.ok) {
    // Only a refused read marks the session: a refused action says so beside its button.
    if (res.status === 403 && (init.method ?? 'GET') === 'GET') setForbidden(true);
    const text = (await res.text().catch(() => '')).trim();
    throw new ApiError(res.status, path, `${res.status} ${res.statusText}${text ? `: ${text}` : ''}`);
  }
  return res;
}

/** A JSON read: the data, its raw text, the X-Nomad-Index and a paged list's X-Nomad-NextToken ('' on the last page). */
export interface ApiRead<T> {
  data: T;
  /** The body as sent: an unchanged answer is the same text, so a view can skip re-rendering. */
  text: string;
  index: number;
  nextToken: string;
}

/** A JSON read with the X-Nomad-Index (and X-Nomad-NextToken) of the answer. */
export async function apiGet<T>(path: string, signal?: AbortSignal): Promise<ApiRead<T>> {
  const res = await apiFetch(path, signal ? { signal } : {});
  const text = await res.text();
  return { data: JSON.parse(text) as T, text, index: Number(res.headers.get('X-Nomad-Index') ?? 0), nextToken: res.headers.get('X-Nomad-NextToken') ?? '' };
}

/** A write (PUT/POST/DELETE) with an optional JSON body; resolves the parsed answer. */
export async function apiWrite<T = unknown>(method: 'PUT' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const init: RequestInit = { method };
  if (body !== undefined) {
    init.body = JSON.stringify(body);
    init.headers = { 'Content-Type': 'application/json' };
  }
  const res = await apiFetch(path, init);
  const text = await res.text();
  return (text ? JSON.parse(text) : {}) as T;
}

/** Appends query parameters (skipping undefined) to a path. */
export function withQuery(path: string, params: Record<string, string | number | boolean | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}
