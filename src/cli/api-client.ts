/**
 * The CLI's HTTP client for an agent's API: JSON in and out, the token header, blocking
 * queries (`index`/`wait`), and typed errors carrying the HTTP status. Network failures are
 * ApiError with status 0.
 */
import type { GlobalOptions } from './global-options.js';

/** An API call that failed: `status` is the HTTP status (0 when the agent was unreachable). */
export class ApiError extends Error {
  readonly code = 'API_ERROR';
  constructor(
    readonly status: number,
    message: string,
    readonly method: string,
    readonly path: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'ApiError';
  }
}

/** A decoded answer and its X-Nomad-Index (0 when the header is absent). */
export interface ApiResponse<T> {
  body: T;
  index: number;
}

/** Query parameters; undefined values are left out. */
export type ApiQuery = Record<string, string | number | boolean | undefined>;

/** A client for one agent address. */
export class ApiClient {
  constructor(
    readonly opts: Pick<GlobalOptions, 'address' | 'token' | 'namespace'> & { region?: string | undefined },
    /** The fetch used for every call (the CLI's TLS settings: cli-tls.ts); streams use it too. */
    readonly fetchFn: typeof fetch = fetch,
  ) {}

  /** GET a resource; with `index`, a blocking query that waits up to `wait` for a change. */
  get<T>(path: string, query: ApiQuery = {}, signal?: AbortSignal): Promise<ApiResponse<T>> {
    return this.request<T>('GET', path, query, undefined, signal);
  }

  put<T>(path: string, body?: unknown, query: ApiQuery = {}): Promise<ApiResponse<T>> {
    return this.request<T>('PUT', path, query, body);
  }

  post<T>(path: string, body?: unknown, query: ApiQuery = {}): Promise<ApiResponse<T>> {
    return this.request<T>('POST', path, query, body);
  }

  delete<T>(path: string, query: ApiQuery = {}): Promise<ApiResponse<T>> {
    return this.request<T>('DELETE', path, query);
  }

  /** The URL of `path` with the namespace and region added, as Nomad's API client does. */
  url(path: string, query: ApiQuery = {}): string {
    const u = new URL(path, this.opts.address + '/');
    const q: ApiQuery = { namespace: this.opts.namespace !== 'default' ? this.opts.namespace : undefined, region: this.opts.region, ...query };
    for (const [k, v] of Object.entries(q)) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /**
   * A request whose answer (or body) is bytes, not JSON — a snapshot file: the Response once it
   * succeeded; ApiError as `request` otherwise.
   */
  async fetchRaw(method: string, path: string, query: ApiQuery = {}, body?: Uint8Array): Promise<Response> {
    const headers: Record<string, string> = {};
    if (this.opts.token) headers['X-Nomad-Token'] = this.opts.token;
    if (body !== undefined) headers['Content-Type'] = 'application/octet-stream';
    let res: Response;
    try {
      res = await this.fetchFn(this.url(path, query), { method, headers, ...(body !== undefined ? { body: new Uint8Array(body) } : {}) });
    } catch (err) {
      throw new ApiError(0, `cannot reach server at ${this.opts.address} (${method} ${path}): ${(err as Error).message}`, method, path, { cause: err });
    }
    if (!res.ok) throw new ApiError(res.status, `Unexpected response code: ${res.status} (${(await res.text()).trim()})`, method, path);
    return res;
  }

  /** Any method, with a body (e.g. Nomad's DELETE /v1/evaluations). */
  async request<T>(method: string, path: string, query: ApiQuery, body?: unknown, signal?: AbortSignal): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (this.opts.token) headers['X-Nomad-Token'] = this.opts.token;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await this.fetchFn(this.url(path, query), {
        method,
        headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const detail = cause?.code ?? cause?.message ?? (err as Error).message;
      throw new ApiError(0, `cannot reach server at ${this.opts.address} (${method} ${path}): ${detail}`, method, path, { cause: err });
    }
    const text = await res.text();
    if (!res.ok) throw new ApiError(res.status, `Unexpected response code: ${res.status} (${text.trim()})`, method, path);
    let parsed: unknown = null;
    if (text.trim() !== '') {
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        throw new ApiError(res.status, `invalid JSON in response to ${method} ${path}: ${(err as Error).message}`, method, path, { cause: err });
      }
    }
    return { body: parsed as T, index: Number(res.headers.get('x-nomad-index') ?? 0) || 0 };
  }
}
