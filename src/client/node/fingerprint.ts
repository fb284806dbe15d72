/**
 * Host fingerprinting: what the node is (CPU, memory, disk, kernel, OS, hostname) as Nomad's
 * node attributes and NodeResources, plus what each driver reports about itself.
 */
import { readFileSync, statfsSync } from 'node:fs';
import * as os from 'node:os';
import type { Driver } from '../../drivers/driver.js';
import type { DriverInfo } from '../../structs/node.js';
import type { NetworkResource, NodeResources } from '../../structs/resources.js';
import { CARAVAN_VERSION, NOMAD_COMPAT_VERSION } from '../../structs/version.js';
import { errorMessage } from '../client-error.js';

/** Used when /proc/cpuinfo has no "cpu MHz" (e.g. some ARM and virtual machines). */
const FALLBACK_MHZ_PER_CORE = 1000;

/** Host facts. */
export interface HostFingerprint {
  attributes: Record<string, string>;
  resources: NodeResources;
}

/** Reads CPU MHz and model name from /proc/cpuinfo; both may be missing. */
export function parseCpuInfo(text: string): { mhz: number | null; model: string | null } {
  let mhz: number | null = null;
  let model: string | null = null;
  for (const line of text.split('\n')) {
    const [k, ...rest] = line.split(':');
    const key = k?.trim();
    const value = rest.join(':').trim();
    if (key === 'cpu MHz' && mhz === null) {
      const n = Number(value);
      if (Number.isFinite(n) && n > 0) mhz = n;
    } else if (key === 'model name' && model === null && value) {
      model = value;
    }
  }
  return { mhz, model };
}

/** Reads NAME and VERSION_ID from /etc/os-release text. */
export function parseOsRelease(text: string): { name: string; version: string } {
  const vals: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const m = /^([A-Z_]+)=(.*)$/.exec(line.trim());
    if (m) vals[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
  }
  return { name: (vals.ID ?? vals.NAME ?? 'linux').toLowerCase(), version: vals.VERSION_ID ?? '' };
}

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Fingerprints the host; `dataDir` is where disk space is measured. */
export function fingerprintHost(dataDir: string): HostFingerprint {
  const cores = Math.max(1, os.cpus().length);
  const cpu = parseCpuInfo(readText('/proc/cpuinfo'));
  const mhz = Math.round(cpu.mhz ?? os.cpus()[0]?.speed ?? FALLBACK_MHZ_PER_CORE) || FALLBACK_MHZ_PER_CORE;
  const totalCompute = mhz * cores;
  const memBytes = os.totalmem();
  const rel = parseOsRelease(readText('/etc/os-release'));
  let freeBytes = 0;
  try {
    const fs = statfsSync(dataDir);
    freeBytes = fs.bavail * fs.bsize;
  } catch {
    freeBytes = 0;
  }
  const attributes: Record<string, string> = {
    'cpu.numcores': String(cores),
    'cpu.frequency': String(mhz),
    'cpu.totalcompute': String(totalCompute),
    'cpu.arch': os.arch() === 'x64' ? 'amd64' : os.arch(),
    'cpu.modelname': cpu.model ?? os.cpus()[0]?.model ?? 'unknown',
    'memory.totalbytes': String(memBytes),
    'kernel.name': os.platform(),
    'kernel.version': os.release().split('-')[0] ?? os.release(),
    'kernel.arch': os.machine(),
    'os.name': rel.name,
    'os.version': rel.version,
    'unique.hostname': os.hostname(),
    'unique.storage.volume': dataDir,
    'unique.storage.bytesfree': String(freeBytes),
    'unique.storage.bytestotal': String(freeBytes),
    'nomad.version': NOMAD_COMPAT_VERSION,
    'nomad.revision': 'caravan',
    'caravan.version': CARAVAN_VERSION,
  };
  const resources: NodeResources = {
    Cpu: { CpuShares: totalCompute, TotalCpuCores: cores, ReservableCpuCores: Array.from({ length: cores }, (_, i) => i) },
    Memory: { MemoryMB: Math.floor(memBytes / (1024 * 1024)) },
    Disk: { DiskMB: Math.floor(freeBytes / (1024 * 1024)) },
    Networks: null,
    Devices: null,
    MinDynamicPort: 20000,
    MaxDynamicPort: 32000,
  };
  return { attributes, resources };
}

/**
 * The node's host network: the interface holding `ip` (the address the client advertises), as
 * Nomad fingerprints the network it will give allocations (mode "host", the address as a /32 or
 * /128 CIDR). The scheduler fills allocated ports' HostIP and networks' IP from it.
 */
export function hostNetwork(ip: string, interfaces: NodeJS.Dict<os.NetworkInterfaceInfo[]> = os.networkInterfaces()): NetworkResource {
  let device = '';
  for (const [name, addrs] of Object.entries(interfaces)) {
    if (addrs?.some((a) => a.address === ip)) {
      device = name;
      break;
    }
  }
  const v6 = ip.includes(':');
  return { Mode: 'host', Device: device, CIDR: `${ip}/${v6 ? 128 : 32}`, IP: ip, MBits: 1000, DNS: null, ReservedPorts: null, DynamicPorts: null };
}

/** Fingerprints every driver; a driver whose fingerprint throws is reported undetected. */
export async function fingerprintDrivers(drivers: readonly Driver[], nowMs: number): Promise<{ drivers: Record<string, DriverInfo>; attributes: Record<string, string> }> {
  const out: Record<string, DriverInfo> = {};
  const attributes: Record<string, string> = {};
  const updateTime = new Date(nowMs).toISOString();
  for (const d of drivers) {
    try {
      const fp = await d.fingerprint();
      out[d.name] = { Attributes: fp.attributes, Detected: fp.detected, Healthy: fp.healthy, HealthDescription: fp.healthDescription, UpdateTime: updateTime };
      if (fp.detected) Object.assign(attributes, fp.attributes);
      if (fp.detected && fp.healthy && !attributes[`driver.${d.name}`]) attributes[`driver.${d.name}`] = '1';
    } catch (err) {
      out[d.name] = { Attributes: null, Detected: false, Healthy: false, HealthDescription: errorMessage(err), UpdateTime: updateTime };
    }
  }
  return { drivers: out, attributes };
}

/** Whether a driver fingerprint differs from the node's, ignoring when each was taken. */
export function driversChanged(before: Record<string, DriverInfo>, after: Record<string, DriverInfo>): boolean {
  const strip = (m: Record<string, DriverInfo>) =>
    JSON.stringify(Object.keys(m).sort().map((k) => [k, m[k]!.Detected, m[k]!.Healthy, m[k]!.HealthDescription, m[k]!.Attributes ?? {}]));
  return strip(before) !== strip(after);
}

/** The node's attributes with every `driver.*` attribute replaced by a new driver fingerprint's. */
export function withDriverAttributes(attributes: Record<string, string>, driverAttributes: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(attributes)) if (!k.startsWith('driver.')) out[k] = v;
  return { ...out, ...driverAttributes };
}
