/**
 * `caravan volume create|register|delete|status`, as Nomad's `nomad volume …` for dynamic host
 * volumes (`type = "host"` in the specification; `-type host` for delete and status, whose
 * default, as Nomad's, is "csi" — which Caravan does not run). Create and register wait for the
 * node to act (the server answers once it has); create then watches the volume until it is
 * ready unless `-detach`.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { HostVolume, HostVolumeStub } from '../../structs/dynamic-host-volume.js';
import type { AllocListStub } from '../../structs/index.js';
import type { ApiClient } from '../api-client.js';
import { CliUsageError, ExitCode, type CliContext } from '../cli-context.js';
import { commandGroup, type CommandModule } from '../command-registry.js';
import { formatColumns, formatKV } from '../format/columns.js';
import { iBytes } from '../format/ibytes.js';
import { readVolumeSpec } from '../volume-spec.js';
import { addApiFlags, apiClient, PrefixError, printJson, runApiCommand, sanitizeUuidPrefix, type ApiFlags } from './api-command.js';

type Detailed = HostVolume & { Allocations?: AllocListStub[] | null };

/** How long `volume create` watches a pending volume before it stops waiting (the volume stays). */
const READY_WAIT_MS = 60_000;

const short = (id: string, verbose?: boolean): string => (verbose ? id : id.slice(0, 8));

/** The table of `volume status -type host`. */
export function formatHostVolumeList(vols: HostVolumeStub[], verbose?: boolean): string {
  if (vols.length === 0) return 'No dynamic host volumes';
  return formatColumns([
    ['ID', 'Name', 'Namespace', 'Plugin ID', 'Node ID', 'Node Pool', 'State'],
    ...vols.map((v) => [short(v.ID, verbose), v.Name, v.Namespace, v.PluginID || '<none>', short(v.NodeID, verbose), v.NodePool, v.State]),
  ]);
}

/** The detail view of `volume status -type host <id>`. */
export function formatHostVolume(v: Detailed, verbose?: boolean): string {
  const out = formatKV([
    ['ID', v.ID],
    ['Name', v.Name],
    ['Namespace', v.Namespace],
    ['Plugin ID', v.PluginID || '<none>'],
    ['Node ID', v.NodeID],
    ['Node Pool', v.NodePool],
    ['Capacity', iBytes(v.CapacityBytes)],
    ['State', v.State],
    ['Host Path', v.HostPath || '<none>'],
  ]);
  const allocs = v.Allocations ?? [];
  const table = allocs.length === 0
    ? 'No allocations placed'
    : formatColumns([['ID', 'Node ID', 'Task Group', 'Version', 'Desired', 'Status'], ...allocs.map((a) => [short(a.ID, verbose), short(a.NodeID, verbose), a.TaskGroup, String(a.JobVersion), a.DesiredStatus, a.ClientStatus])]);
  return `${out}\n\nAllocations\n${table}`;
}

/** The one host volume whose ID starts with `prefix` (PrefixError listing them when several). */
async function resolveVolume(api: ApiClient, prefix: string): Promise<string> {
  if (prefix === '') throw new CliUsageError('volume ID is required');
  const { body } = await api.get<HostVolumeStub[]>('/v1/volumes', { type: 'host', prefix: sanitizeUuidPrefix(prefix) });
  const exact = body.find((v) => v.ID === prefix);
  if (exact) return exact.ID;
  const matches = body.filter((v) => v.ID.startsWith(prefix));
  if (matches.length === 1) return matches[0]!.ID;
  if (matches.length === 0) throw new PrefixError(`No host volume with prefix or id "${prefix}" found`);
  throw new PrefixError(`Prefix matched multiple host volumes\n\n${formatHostVolumeList(matches)}`);
}

function requireHostType(type: string | undefined): void {
  const t = type ?? 'csi';
  if (t === 'host') return;
  if (t === 'csi') throw new CliUsageError('CSI volumes are not supported by Caravan: use -type host for dynamic host volumes');
  throw new CliUsageError(`invalid -type ${JSON.stringify(t)}: want "csi" or "host"`);
}

async function readSpec(file: string, json: boolean): Promise<Record<string, unknown>> {
  const text = await readFile(file, 'utf8').catch((err: Error) => {
    throw new CliUsageError(`reading ${file}: ${err.message}`);
  });
  return readVolumeSpec(file, text, json);
}

/** Watches a pending volume until it is ready (or the wait ends); answers the last state seen. */
async function waitReady(api: ApiClient, vol: HostVolume): Promise<HostVolume> {
  let cur = vol;
  const deadline = Date.now() + READY_WAIT_MS;
  while (cur.State !== 'ready' && Date.now() < deadline) {
    const { body } = await api.get<HostVolume>(`/v1/volume/host/${encodeURIComponent(cur.ID)}`, { index: cur.ModifyIndex, wait: '10s', namespace: cur.Namespace });
    cur = body;
  }
  return cur;
}

/** Registers `volume …`. */
export const volumeCommands: CommandModule = {
  register(program: Command, ctx: CliContext): void {
    const volume = commandGroup(program, 'volume').description('Interact with volumes');

    addApiFlags(volume.command('create').description('Create a dynamic host volume from a specification file').argument('<file>').option('--detach', 'answer once created, without waiting for it to be ready').option('--verbose', 'show full IDs')).action(
      async (file: string, opts: ApiFlags & { detach?: boolean; verbose?: boolean }) => {
        const spec = await readSpec(file, opts.json === true);
        await runApiCommand(ctx, 'creating volume', async () => {
          const api = apiClient(ctx, opts);
          const { body } = await api.put<{ Volume: HostVolume }>('/v1/volume/host/create', { Volume: spec, PolicyOverride: false });
          const vol = body.Volume;
          ctx.stdout.write(`==> Created host volume ${vol.Name} with ID ${vol.ID}\n`);
          if (opts.detach) return ExitCode.Ok;
          const ready = await waitReady(api, vol);
          if (ready.State === 'ready') ctx.stdout.write(`  ✓ Host volume "${short(ready.ID, opts.verbose)}" ready\n`);
          else ctx.stdout.write(`  Host volume "${short(ready.ID, opts.verbose)}" is ${ready.State}\n`);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(volume.command('register').description('Register an existing path on a node as a dynamic host volume').argument('<file>')).action(async (file: string, opts: ApiFlags) => {
      const spec = await readSpec(file, opts.json === true);
      await runApiCommand(ctx, 'registering volume', async () => {
        const { body } = await apiClient(ctx, opts).put<{ Volume: HostVolume }>('/v1/volume/host/register', { Volume: spec, PolicyOverride: false });
        ctx.stdout.write(`==> Registered host volume ${body.Volume.Name} with ID ${body.Volume.ID}\n`);
        return ExitCode.Ok;
      });
    });

    addApiFlags(volume.command('delete').description('Delete a volume').argument('<id>').option('--type <type>', 'the volume type: csi or host', 'csi')).action(
      async (id: string, opts: ApiFlags & { type?: string }) => {
        requireHostType(opts.type);
        await runApiCommand(ctx, 'deleting volume', async () => {
          const api = apiClient(ctx, opts);
          const full = await resolveVolume(api, id);
          await api.delete(`/v1/volume/host/${encodeURIComponent(full)}`);
          ctx.stdout.write(`Successfully deleted volume "${full}"!\n`);
          return ExitCode.Ok;
        });
      },
    );

    addApiFlags(volume.command('status').description('Display status information about volumes').argument('[id]').option('--type <type>', 'only volumes of this type: csi or host').option('--verbose', 'show full IDs').option('--node-id <id>', 'only volumes on this node').option('--node-pool <pool>', 'only volumes in this node pool')).action(
      async (id: string | undefined, opts: ApiFlags & { type?: string; verbose?: boolean; nodeId?: string; nodePool?: string }) => {
        if (opts.type === 'csi') throw new CliUsageError('CSI volumes are not supported by Caravan: use -type host for dynamic host volumes');
        if (opts.type !== undefined && opts.type !== 'host') throw new CliUsageError(`invalid -type ${JSON.stringify(opts.type)}: want "csi" or "host"`);
        await runApiCommand(ctx, 'reading volumes', async () => {
          const api = apiClient(ctx, opts);
          if (id === undefined) {
            const { body } = await api.get<HostVolumeStub[]>('/v1/volumes', { type: 'host', node_id: opts.nodeId, node_pool: opts.nodePool });
            if (opts.json) printJson(ctx, body);
            else ctx.stdout.write(`${formatHostVolumeList(body, opts.verbose)}\n`);
            return ExitCode.Ok;
          }
          const full = await resolveVolume(api, id);
          const { body } = await api.get<Detailed>(`/v1/volume/host/${encodeURIComponent(full)}`);
          if (opts.json) printJson(ctx, body);
          else ctx.stdout.write(`${formatHostVolume(body, opts.verbose)}\n`);
          return ExitCode.Ok;
        });
      },
    );
  },
};
