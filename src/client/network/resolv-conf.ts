/**
 * The files that give a group network its names: resolv.conf from the network's
 * `dns { servers searches options }`, and a hosts file naming the allocation's `hostname`.
 */

/** A group network's `dns` block. */
export interface DnsConfig {
  Servers: string[];
  Searches: string[];
  Options: string[];
}

/** resolv.conf text for the dns block: one nameserver line each, then search and options. */
export function resolvConfText(dns: DnsConfig): string {
  const lines: string[] = [];
  for (const s of dns.Servers) lines.push(`nameserver ${s}`);
  if (dns.Searches.length > 0) lines.push(`search ${dns.Searches.join(' ')}`);
  if (dns.Options.length > 0) lines.push(`options ${dns.Options.join(' ')}`);
  return lines.join('\n') + '\n';
}

/** hosts file text: loopback names, and the hostname on the allocation's address (loopback without one). */
export function hostsText(hostname: string, address: string): string {
  const lines = ['127.0.0.1 localhost', '::1 localhost ip6-localhost ip6-loopback'];
  lines.push(`${address || '127.0.1.1'} ${hostname}`);
  return lines.join('\n') + '\n';
}
