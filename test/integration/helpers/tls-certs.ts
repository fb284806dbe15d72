/**
 * Certificates made at test time with the `openssl` CLI: a CA, and leaf certificates it signs
 * (EC P-256, valid one day) with the names and IPs asked for, usable for both server and client
 * authentication, as Nomad's `nomad tls cert create` makes them.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Paths of one certificate and its key. */
export interface CertFiles {
  cert: string;
  key: string;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** Makes a CA in `dir` (ca.pem, ca-key.pem). */
export function makeCa(dir: string): CertFiles {
  const key = join(dir, 'ca-key.pem');
  const cert = join(dir, 'ca.pem');
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], dir);
  openssl(['req', '-x509', '-new', '-key', key, '-out', cert, '-days', '1', '-subj', '/CN=Caravan Test CA'], dir);
  return { cert, key };
}

/** Makes `<name>.pem` and `<name>-key.pem` in `dir`, signed by `ca`, for `dns` names and `ips`. */
export function makeLeaf(dir: string, ca: CertFiles, name: string, dns: string[], ips: string[] = []): CertFiles {
  const key = join(dir, `${name}-key.pem`);
  const csr = join(dir, `${name}.csr`);
  const cert = join(dir, `${name}.pem`);
  const ext = join(dir, `${name}.ext`);
  const san = [...dns.map((d) => `DNS:${d}`), ...ips.map((i) => `IP:${i}`)].join(',');
  writeFileSync(ext, `subjectAltName=${san}\nextendedKeyUsage=serverAuth,clientAuth\nbasicConstraints=CA:FALSE\n`);
  openssl(['ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', key], dir);
  openssl(['req', '-new', '-key', key, '-out', csr, '-subj', `/CN=${dns[0] ?? name}`], dir);
  openssl(['x509', '-req', '-in', csr, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', cert, '-days', '1', '-extfile', ext], dir);
  return { cert, key };
}
