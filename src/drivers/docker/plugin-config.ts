/**
 * The client's `plugin "docker" { config { … } }` block, read as Nomad reads it: which engine
 * to talk to, what task configs may ask for (privileged, runtimes, capabilities, host
 * volumes, namespace modes) and how containers and images are garbage collected. Defaults are
 * Nomad's.
 */
import { badConfig, blockOf, boolOf, durationMsOf, refuseUnknown, strListOf, strOf, type Obj } from './config-values.js';
import { checkAllowedModes, DEFAULT_ALLOWED_MODES, NAMESPACE_MODES, type AllowedModes, type Namespace } from './confinement-options.js';

/** Nomad's default `allow_caps`: Docker's default capability set. */
export const DEFAULT_ALLOW_CAPS = [
  'audit_write', 'chown', 'dac_override', 'fowner', 'fsetid', 'kill', 'mknod',
  'net_bind_service', 'setfcap', 'setgid', 'setpcap', 'setuid', 'sys_chroot',
];

/** The docker plugin's configuration. */
export interface DockerPluginConfig {
  /** `unix:///path` or `tcp://host:port`. */
  endpoint: string;
  allowPrivileged: boolean;
  /** Lower-case capability names without `CAP_`; `all` allows every capability. */
  allowCaps: string[];
  allowRuntimes: string[];
  /** Namespace modes tasks may ask for (`allowed_modes { pid ipc uts userns }`); allow_privileged allows all. */
  allowedModes: AllowedModes;
  volumesEnabled: boolean;
  gc: {
    image: boolean;
    imageDelayMs: number;
    container: boolean;
    /** Removal of containers this client created but no task tracks (Nomad's dangling_containers). */
    dangling: { enabled: boolean; periodMs: number; creationGraceMs: number; dryRun: boolean };
  };
  /** A pull with no progress for this long is aborted. */
  pullActivityTimeoutMs: number;
  /** `infra_image`: the pause container's image, which owns a group network's namespace. */
  infraImage: string;
  /** `infra_image_pull_timeout`: how long pulling infra_image may take. */
  infraImagePullTimeoutMs: number;
  /** Extra runtime args passed by `runtime` name are not configurable here: the engine's own. */
  extraLabels: string[];
}

/** Settings Nomad knows that this driver accepts and ignores (they change nothing here). */
const IGNORED = ['auth', 'tls', 'logging', 'disable_log_collection', 'image_pull_timeout', 'nvidia_runtime', 'windows_allow_insecure_container_admin'];
const KNOWN = ['infra_image', 'infra_image_pull_timeout', 'endpoint', 'allow_privileged', 'allow_caps', 'allow_runtimes', 'allowed_modes', 'volumes', 'gc', 'pull_activity_timeout', 'extra_labels', ...IGNORED];

/** The default endpoint: $DOCKER_HOST, else the standard socket. */
export function defaultEndpoint(env: NodeJS.ProcessEnv = process.env): string {
  return env['DOCKER_HOST'] || 'unix:///var/run/docker.sock';
}

/** Go's name of this machine's architecture, as in Nomad's default infra_image. */
function goArch(arch: string = process.arch): string {
  return ({ x64: 'amd64', ia32: '386', arm: 'arm', arm64: 'arm64', ppc64: 'ppc64le', s390x: 's390x' } as Record<string, string>)[arch] ?? arch;
}

/** Nomad's default `infra_image`. */
export function defaultInfraImage(arch?: string): string {
  return `registry.k8s.io/pause-${goArch(arch)}:3.3`;
}

/** Normalises a capability name: `CAP_NET_ADMIN` → `net_admin`. */
export function capName(c: string): string {
  return c.trim().toLowerCase().replace(/^cap_/, '');
}

function parseAllowedModes(o: Obj): AllowedModes {
  const b = blockOf(o, 'allowed_modes', 'allowed_modes') ?? {};
  const names = Object.keys(NAMESPACE_MODES) as Namespace[];
  refuseUnknown(b, names, 'plugin.docker.config.allowed_modes.');
  const out = {} as AllowedModes;
  for (const ns of names) out[ns] = checkAllowedModes(ns, strListOf(b, ns, `allowed_modes.${ns}`) ?? [...DEFAULT_ALLOWED_MODES[ns]]);
  return out;
}

/** Reads the plugin's config body (`config { … }`); throws DriverError naming a bad option. */
export function parseDockerPluginConfig(raw: Obj | undefined, env: NodeJS.ProcessEnv = process.env): DockerPluginConfig {
  const o = raw ?? {};
  refuseUnknown(o, KNOWN, 'plugin.docker.config.');
  const volumes = blockOf(o, 'volumes', 'volumes') ?? {};
  refuseUnknown(volumes, ['enabled', 'selinuxlabel'], 'plugin.docker.config.volumes.');
  const gc = blockOf(o, 'gc', 'gc') ?? {};
  refuseUnknown(gc, ['image', 'image_delay', 'container', 'dangling_containers'], 'plugin.docker.config.gc.');
  const imageDelayMs = durationMsOf(gc, 'image_delay', 'gc.image_delay') ?? 3 * 60_000;
  if (imageDelayMs < 0) throw badConfig('gc.image_delay', 'must not be negative');
  const dangling = blockOf(gc, 'dangling_containers', 'gc.dangling_containers') ?? {};
  refuseUnknown(dangling, ['enabled', 'period', 'creation_grace', 'dry_run'], 'plugin.docker.config.gc.dangling_containers.');
  const periodMs = durationMsOf(dangling, 'period', 'gc.dangling_containers.period') ?? 5 * 60_000;
  if (periodMs <= 0) throw badConfig('gc.dangling_containers.period', 'must be positive');
  const creationGraceMs = durationMsOf(dangling, 'creation_grace', 'gc.dangling_containers.creation_grace') ?? 5 * 60_000;
  if (creationGraceMs < 0) throw badConfig('gc.dangling_containers.creation_grace', 'must not be negative');
  const pullMs = durationMsOf(o, 'pull_activity_timeout', 'pull_activity_timeout') ?? 2 * 60_000;
  if (pullMs <= 0) throw badConfig('pull_activity_timeout', 'must be positive');
  const infraImage = strOf(o, 'infra_image', 'infra_image') ?? defaultInfraImage();
  if (infraImage.trim() === '') throw badConfig('infra_image', 'must name an image');
  const infraPullMs = durationMsOf(o, 'infra_image_pull_timeout', 'infra_image_pull_timeout') ?? 5 * 60_000;
  if (infraPullMs <= 0) throw badConfig('infra_image_pull_timeout', 'must be positive');
  return {
    endpoint: strOf(o, 'endpoint', 'endpoint') ?? defaultEndpoint(env),
    allowPrivileged: boolOf(o, 'allow_privileged', 'allow_privileged') ?? false,
    allowCaps: (strListOf(o, 'allow_caps', 'allow_caps') ?? DEFAULT_ALLOW_CAPS).map(capName),
    allowRuntimes: strListOf(o, 'allow_runtimes', 'allow_runtimes') ?? ['runc', 'nvidia'],
    allowedModes: parseAllowedModes(o),
    volumesEnabled: boolOf(volumes, 'enabled', 'volumes.enabled') ?? false,
    gc: {
      image: boolOf(gc, 'image', 'gc.image') ?? true,
      imageDelayMs,
      container: boolOf(gc, 'container', 'gc.container') ?? true,
      dangling: {
        enabled: boolOf(dangling, 'enabled', 'gc.dangling_containers.enabled') ?? true,
        periodMs,
        creationGraceMs,
        dryRun: boolOf(dangling, 'dry_run', 'gc.dangling_containers.dry_run') ?? false,
      },
    },
    pullActivityTimeoutMs: pullMs,
    infraImage,
    infraImagePullTimeoutMs: infraPullMs,
    extraLabels: strListOf(o, 'extra_labels', 'extra_labels') ?? [],
  };
}
