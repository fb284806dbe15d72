/**
 * Nomad's Task API: the agent's HTTP API served on each task's `secrets/api.sock`, in process.
 * The client's task-api hook listens on the socket and hands every connection here; requests go
 * to the same fastify routes as the TCP listener (`app.routing`), without a TCP hop or TLS.
 *
 * Unlike the TCP listener, every request must authenticate — ACLs on or off, as Nomad's
 * authMiddleware: no token is 401, a token that is neither an ACL token nor a workload identity
 * of the cluster (or is the anonymous token) is 403. Past that, the routes' own ACL checks apply
 * when ACLs are on. Agent-to-agent routes (/v1/internal/*) are refused outright: they take the
 * node's secret or certificate, never a task's token, and the client-only agent's proxy would
 * otherwise carry them to the servers over its own mutual TLS.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { ANONYMOUS_TOKEN } from '../../structs/acl.js';
import { CaravanError } from '../../structs/caravan-error.js';
import { ERROR_CODE_HEADER } from '../../structs/error-catalogue.js';
import { HttpError } from '../http-errors.js';
import { tokenFromHeaders, type RawHeaders } from '../query-options.js';
import type { TokenResolver } from '../acl/acl-gate.js';
import type { TaskApiConnections } from '../../client/taskrunner/hooks/task-api-hook.js';

/** The Task API of one agent; see the file comment. */
export class TaskApiServer implements TaskApiConnections {
  private readonly http: Server;

  constructor(
    private readonly app: FastifyInstance,
    /** How tokens are resolved: the server's ACL endpoint, or a client-only agent's servers. */
    private readonly resolver: () => TokenResolver | undefined,
    private readonly logger?: Logger,
  ) {
    this.http = createServer((req, res) => void this.serve(req, res));
    // Exec sessions (websockets) authenticate the same way, then go to the agent's own upgrade handler.
    this.http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head));
    this.http.on('clientError', (_err, socket: Duplex) => socket.destroy());
  }

  /** Serves the agent's HTTP API on `socket`, authenticating every request. */
  accept(socket: Socket): void {
    this.http.emit('connection', socket);
  }

  /** Ends every connection (agent shutdown); the sockets themselves are the hooks'. */
  close(): void {
    this.http.closeAllConnections();
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const refusal = await this.authenticate(req);
    if (!refusal) {
      this.app.routing(req, res);
      return;
    }
    res.writeHead(refusal.status, { 'Content-Type': 'text/plain; charset=utf-8', [ERROR_CODE_HEADER]: refusal.code });
    res.end(refusal.message);
  }

  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const refusal = await this.authenticate(req);
    if (!refusal && this.app.server.listenerCount('upgrade') > 0) {
      this.app.server.emit('upgrade', req, socket, head);
      return;
    }
    const status = refusal?.status ?? 404;
    socket.end(`HTTP/1.1 ${status} ${refusal?.message ?? 'Not Found'}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
  }

  /** Why the request may not go on (undefined: it authenticated). */
  private async authenticate(req: IncomingMessage): Promise<CaravanError | undefined> {
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    if (path.startsWith('/v1/internal/')) return new HttpError('TASK_API_ROUTE_REFUSED', { path });
    const secret = tokenFromHeaders(req.headers as RawHeaders);
    if (secret === '') return new HttpError('TASK_API_UNAUTHENTICATED', {});
    const resolver = this.resolver();
    if (!resolver) return new HttpError('TASK_API_AUTH_FAILED', { reason: 'this agent has no server to resolve tokens with' });
    try {
      const { token } = await resolver.resolve(secret);
      // The anonymous policy is not available through the Task API (Nomad's rule).
      if (token.AccessorID === ANONYMOUS_TOKEN.AccessorID) return new HttpError('TASK_API_FORBIDDEN', {});
      return undefined;
    } catch (err) {
      if (err instanceof CaravanError && isRefusal(err.code)) {
        this.logger?.debug({ method: req.method, url: path, code: err.code }, 'Task API request refused');
        return new HttpError('TASK_API_FORBIDDEN', {});
      }
      this.logger?.warn({ err, url: path }, 'Task API could not authenticate a request');
      // The details (server addresses, the resolver's error) go to the agent's log, not to the task.
      return new HttpError('TASK_API_AUTH_FAILED', { reason: 'the token could not be resolved' });
    }
  }
}

/** Whether a resolver's error means "not a token of this cluster" (rather than "could not ask"). */
function isRefusal(code: string): boolean {
  return code.startsWith('ACL_') || code === 'WORKLOAD_IDENTITY_INVALID';
}
