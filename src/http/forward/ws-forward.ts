/**
 * Proxies an exec websocket to the client agent holding the allocation: frames are piped both
 * ways unchanged, and a close on either side (with its code and reason) closes the other.
 */
import { WebSocket, type RawData } from 'ws';
import type { IncomingMessage } from 'node:http';
import { closeReason, WsCloseCode } from '../exec/exec-session.js';
import { FORWARDED_HEADER, type RemoteClient } from './alloc-target.js';
import { withScheme, type OutboundTls } from '../../tls/tls-config.js';

/** Headers passed on to the remote websocket (auth and the forwarding marker). */
function forwardHeaders(req: IncomingMessage, marker: string): Record<string, string> {
  const out: Record<string, string> = { [marker]: '1' };
  for (const name of ['x-nomad-token', 'authorization']) {
    const v = req.headers[name];
    if (typeof v === 'string') out[name] = v;
  }
  return out;
}

/** A close code that may be sent on the wire (1005/1006/1015 are reserved for reporting). */
function sendableCode(code: number): number {
  return code === 1005 || code === 1006 || code === 1015 || code < 1000 || code >= 5000 ? WsCloseCode.Normal : code;
}

/** How a forward marks itself and names its target in errors. */
export interface WsForwardOptions {
  /**
   * The header that marks the forwarded request (default FORWARDED_HEADER: a server's hop to
   * the client, never forwarded again). A client-only agent's hop to a server uses
   * FORWARDED_BY_CLIENT_HEADER instead, so that the server may still forward it to the client.
   */
  marker?: string;
  /** What `remote` is, for the close reason when it cannot be reached. */
  describe?: string;
  /** Mutual TLS to `remote` (wss://); `peer` says which certificate name applies. */
  tls?: OutboundTls;
  peer?: 'server' | 'client';
}

/** The forward of one socket, as its caller may end it. */
export interface WsForward {
  /** Drops the upstream connection at once (the remote ends its session); frames from downstream go nowhere after. */
  terminate(): void;
}

/** Pipes `downstream` (the user's socket) to the same URL on `remote`. */
export function forwardWebSocket(downstream: WebSocket, req: IncomingMessage, remote: RemoteClient, opts: WsForwardOptions = {}): WsForward {
  const url = new URL(req.url ?? '/', withScheme(remote.baseUrl, opts.tls !== undefined).replace(/^http/, 'ws'));
  const upstream = new WebSocket(url, {
    headers: forwardHeaders(req, opts.marker ?? FORWARDED_HEADER),
    perMessageDeflate: false,
    ...(opts.tls ? opts.tls.connectOptions(opts.peer ?? 'client') : {}),
  });
  const describe = opts.describe ?? `the client of node ${remote.nodeId}`;
  const pending: { data: RawData; isBinary: boolean }[] = [];

  downstream.on('message', (data, isBinary) => {
    if (upstream.readyState === WebSocket.OPEN) upstream.send(data, { binary: isBinary });
    else if (upstream.readyState === WebSocket.CONNECTING) pending.push({ data, isBinary });
  });
  upstream.on('open', () => {
    for (const p of pending.splice(0)) upstream.send(p.data, { binary: p.isBinary });
  });
  upstream.on('message', (data, isBinary) => {
    if (downstream.readyState === WebSocket.OPEN) downstream.send(data, { binary: isBinary });
  });
  upstream.on('close', (code, reason) => {
    if (downstream.readyState === WebSocket.OPEN) downstream.close(sendableCode(code), reason.toString());
  });
  upstream.on('error', (err) => {
    if (downstream.readyState === WebSocket.OPEN) {
      downstream.close(WsCloseCode.InternalError, closeReason(`cannot reach ${describe}: ${err.message}`));
    }
  });
  downstream.on('close', () => {
    if (upstream.readyState === WebSocket.OPEN || upstream.readyState === WebSocket.CONNECTING) upstream.terminate();
  });
  downstream.on('error', () => { /* 'close' follows */ });
  return {
    terminate() {
      pending.length = 0;
      if (upstream.readyState !== WebSocket.CLOSED) upstream.terminate();
    },
  };
}
