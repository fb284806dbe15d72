import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { clientRouteAllocId, isLocalRoute, ServerProxy, shouldProxy } from '../../src/http/forward-to-server/server-proxy.js';

describe('which requests a client-only agent proxies', () => {
  const rows: { name: string; url: string; headers?: Record<string, string>; has?: boolean; proxy: boolean }[] = [
    { name: 'jobs', url: '/v1/jobs?prefix=a', proxy: true },
    { name: 'event stream', url: '/v1/event/stream?topic=Job', proxy: true },
    { name: 'agent members', url: '/v1/agent/members', proxy: true },
    { name: 'agent self stays', url: '/v1/agent/self', proxy: false },
    { name: 'health stays', url: '/v1/agent/health', proxy: false },
    { name: 'metrics stay', url: '/v1/metrics?format=prometheus', proxy: false },
    { name: 'not /v1', url: '/ui/', proxy: false },
    { name: 'a local alloc stays', url: '/v1/client/fs/logs/abc?task=t', has: true, proxy: false },
    { name: 'a remote alloc goes to the servers', url: '/v1/client/fs/logs/abc?task=t', has: false, proxy: true },
    { name: 'remote alloc stats', url: '/v1/client/allocation/abc/stats', has: false, proxy: true },
    { name: 'already forwarded', url: '/v1/client/allocation/abc/stats', has: false, headers: { 'x-caravan-forwarded': '1' }, proxy: false },
  ];
  for (const r of rows) {
    it(r.name, () => {
      assert.equal(shouldProxy(r.url, r.headers ?? {}, (id) => (assert.equal(id, 'abc'), r.has ?? true)), r.proxy);
    });
  }
  it('parses allocation IDs of client routes', () => {
    assert.equal(clientRouteAllocId('/v1/client/fs/cat/x1?path=/'), 'x1');
    assert.equal(clientRouteAllocId('/v1/client/allocation/x2/restart'), 'x2');
    assert.equal(clientRouteAllocId('/v1/client/stats'), undefined);
    assert.equal(isLocalRoute('/v1/client/stats'), true);
  });
});

describe('ServerProxy', () => {
  const servers: Server[] = [];
  after(() => servers.forEach((s) => s.close()));

  async function upstream(handler: Parameters<typeof createServer>[1]): Promise<string> {
    const s = createServer(handler);
    servers.push(s);
    await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
    return `127.0.0.1:${(s.address() as AddressInfo).port}`;
  }

  async function through(proxy: ServerProxy, path: string, init: RequestInit = {}): Promise<Response> {
    const front = createServer((req, res) => void proxy.proxy(req, res));
    servers.push(front);
    await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
    return fetch(`http://127.0.0.1:${(front.address() as AddressInfo).port}${path}`, init);
  }

  it('passes method, path, query, token and body, and fails over past a dead server', async () => {
    const live = await upstream((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        res.writeHead(201, { 'X-Nomad-Index': '7', 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ method: req.method, url: req.url, token: req.headers['x-nomad-token'], body }));
      });
    });
    const dead = await upstream(() => undefined);
    servers.at(-1)!.close();
    const proxy = new ServerProxy({ servers: [dead, live] });
    const res = await through(proxy, '/v1/jobs?prefix=x', { method: 'PUT', headers: { 'X-Nomad-Token': 'secret' }, body: '{"Job":{}}' });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-nomad-index'), '7');
    assert.deepEqual(await res.json(), { method: 'PUT', url: '/v1/jobs?prefix=x', token: 'secret', body: '{"Job":{}}' });
    assert.equal(proxy.servers()[0], `http://${live}`, 'the server that answered is preferred');
    proxy.close();
  });

  it('answers 503 naming every server when none answers', async () => {
    const dead = await upstream(() => undefined);
    servers.at(-1)!.close();
    const proxy = new ServerProxy({ servers: [dead] });
    const res = await through(proxy, '/v1/jobs');
    assert.equal(res.status, 503);
    assert.match(await res.text(), new RegExp(`no server reachable.*${dead.replace(/\./g, '\\.')}`));
    proxy.close();
  });
});
