/**
 * `server { etcd { tls { ca_file, cert_file, key_file } } }` against a real etcd that requires
 * TLS and client certificates (a CA, a server and a client certificate made with openssl for
 * the test): the log and the leadership work over TLS, and a client without a certificate
 * gets a clear error instead of a hang.
 */
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EtcdCluster } from '../helpers/etcd-process.js';
import { openEtcdReplication } from '../../src/server/etcd/etcd-replication.js';
import { LogError } from '../../src/server/log/log-backend.js';

let dir: string;
let etcd: EtcdCluster;
let files: { ca: string; serverCert: string; serverKey: string; clientCert: string; clientKey: string };

/** A CA, and a certificate for 127.0.0.1 and one for a client, both signed by it. */
function makeCertificates(d: string): typeof files {
  const ssl = (...args: string[]): void => void execFileSync('openssl', args, { cwd: d, stdio: 'ignore' });
  ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca-key.pem', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=caravan-test-ca');
  const sign = (name: string, ext: string): void => {
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}-key.pem`, '-out', `${name}.csr`, '-subj', `/CN=${name}`);
    writeFileSync(join(d, `${name}.ext`), ext);
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca-key.pem', '-CAcreateserial', '-out', `${name}.pem`, '-days', '1', '-extfile', `${name}.ext`);
  };
  sign('server', 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n');
  sign('client', 'extendedKeyUsage=clientAuth\n');
  return {
    ca: join(d, 'ca.pem'),
    serverCert: join(d, 'server.pem'),
    serverKey: join(d, 'server-key.pem'),
    clientCert: join(d, 'client.pem'),
    clientKey: join(d, 'client-key.pem'),
  };
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'caravan-etcd-tls-'));
  files = makeCertificates(dir);
  etcd = await EtcdCluster.start(1, { certFile: files.serverCert, keyFile: files.serverKey, caFile: files.ca, clientCertFile: files.clientCert, clientKeyFile: files.clientKey });
});
after(async () => {
  await etcd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('the log and leadership work over TLS with a client certificate', async () => {
  assert.match(etcd.endpoints[0]!, /^https:/);
  const { log, leadership } = openEtcdReplication(
    { endpoints: etcd.endpoints, prefix: '/tls/', tls: { caFile: files.ca, certFile: files.clientCert, keyFile: files.clientKey } },
    { id: 's1', name: 's1', address: '127.0.0.1:4646' },
  );
  try {
    await leadership.start();
    const deadline = Date.now() + 10_000;
    while (!leadership.isLeader()) {
      if (Date.now() > deadline) assert.fail('no leadership over TLS');
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(await log.append([{ type: 't', payload: 'over tls' }]), [1]);
    assert.deepEqual((await log.read(1)).map((e) => e.payload), ['over tls']);
  } finally {
    await log.close();
    await leadership.close();
  }
});

it('without a client certificate the server refuses, and the log says so (LOG_IO)', async () => {
  const { log, leadership } = openEtcdReplication({ endpoints: etcd.endpoints, prefix: '/tls/', tls: { caFile: files.ca } }, { id: 's2', name: 's2', address: '127.0.0.1:4647' });
  try {
    await assert.rejects(log.lastIndex(), (e: unknown) => e instanceof LogError && e.code === 'LOG_IO');
  } finally {
    await log.close();
    await leadership.close();
  }
});
