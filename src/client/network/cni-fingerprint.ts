/**
 * Node attributes for the CNI plugins the client can run, as Nomad's CNI fingerprint:
 * `plugins.cni.version.<plugin>` for every executable in `cni_path` (the version the plugin
 * prints when run without a command, "unknown" when it prints none). The scheduler places
 * bridge-mode groups only on nodes that have the plugins bridge mode needs.
 */
import { execFile } from 'node:child_process';
import { access, constants, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** The attribute naming a plugin's version. */
export function cniPluginAttribute(plugin: string): string {
  return `plugins.cni.version.${plugin}`;
}

function pluginVersion(file: string): Promise<string> {
  return new Promise((resolve) => {
    // Without CNI_COMMAND a reference plugin prints "CNI <name> plugin v1.2.3" (or "version unknown").
    execFile(file, [], { env: {}, timeout: 5_000 }, (_err, stdout, stderr) => {
      const m = /plugin (v?\d+\.\d+\.\d+\S*)/.exec(`${String(stdout)}\n${String(stderr)}`);
      resolve(m ? m[1]! : 'unknown');
    });
  });
}

/** The attributes of the plugins found on the path (first directory wins for a name). */
export async function fingerprintCniPlugins(cniPath: readonly string[]): Promise<Record<string, string>> {
  const found = new Map<string, string>();
  for (const dir of cniPath) {
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (found.has(name) || !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name)) continue;
      const file = join(dir, name);
      try {
        await access(file, constants.X_OK);
        found.set(name, file);
      } catch {
        // not a plugin
      }
    }
  }
  const attrs: Record<string, string> = {};
  await Promise.all([...found].map(async ([name, file]) => (attrs[cniPluginAttribute(name)] = await pluginVersion(file))));
  return attrs;
}
