/**
 * Nomad's variable specification, as `nomad var put`, `var lock` and `var init` read and write
 * it: HCL (`path`, `namespace`, an `items { key = "value" }` block) or JSON (the API's Variable:
 * `Path`, `Namespace`, `Items`; other fields, as `var get -out json` prints them, are ignored).
 * A reference is `@file` (its extension picks the format, else `-in`) or `-` (stdin, in `-in`'s
 * format, JSON by default). A specification that cannot be read or parsed is an error of the
 * run (exit 1), as Nomad's.
 */
import { readFile } from 'node:fs/promises';
import { extname, resolve } from 'node:path';
import { parse as parseHcl } from '@cdktf/hcl2json';
import { CliRunError, CliUsageError } from './cli-context.js';
import { givenNamespace } from './global-options.js';
import { readStdin } from './read-stdin.js';

/** What a specification gives: items, and optionally where the variable lives. */
export interface VarSpec {
  Path?: string;
  Namespace?: string;
  /** The modify index the specification was read at (`var get` prints it): put's check-and-set index. */
  ModifyIndex?: number;
  Items: Record<string, string>;
}

export type VarSpecFormat = 'hcl' | 'json';

/** `var init`'s example, in each format. */
export const VAR_SPEC_EXAMPLE: Record<VarSpecFormat, string> = {
  hcl: `# A variable path can be given here, and is used when the command names none.
# path = "path/to/variable"

# The namespace to write the variable in; the -namespace flag overrides it.
# namespace = "default"

# The items: the only required part. They are stored together as one variable.
items {
  key1 = "value 1"
  key2 = "value 2"
}
`,
  json: `${JSON.stringify({ Namespace: 'default', Path: 'path/to/variable', Items: { key1: 'value 1', key2: 'value 2' } }, null, 2)}\n`,
};

/** True for an argument that names a specification rather than a path or an item. */
export function isSpecReference(arg: string): boolean {
  return arg === '-' || arg.startsWith('@');
}

/** Parses `-in`; undefined when the flag was not given. */
export function specFormat(raw: string | undefined): VarSpecFormat | undefined {
  if (raw === undefined) return undefined;
  if (raw !== 'hcl' && raw !== 'json') throw new CliUsageError(`invalid -in ${JSON.stringify(raw)}: want hcl or json`);
  return raw;
}

/** Reads and parses the specification `ref` names (`@file`, relative to `cwd`, or `-`). */
export async function readVarSpec(ref: string, inFormat: VarSpecFormat | undefined, cwd: string): Promise<VarSpec> {
  if (ref === '-') {
    // Nothing is piped from a terminal: waiting for one would hang the command.
    if (process.stdin.isTTY) throw new CliUsageError('"-" reads the variable specification from stdin, which is a terminal: pipe it in');
    return parseVarSpec((await readStdin()).toString('utf8'), inFormat ?? 'json', 'standard input');
  }
  const file = resolve(cwd, ref.slice(1));
  const text = await readFile(file, 'utf8').catch((err: Error) => {
    throw new CliRunError(`Error reading variable specification: ${err.message}`);
  });
  const ext = extname(file).toLowerCase();
  const format = ext === '.hcl' ? 'hcl' : ext === '.json' ? 'json' : (inFormat ?? 'json');
  return parseVarSpec(text, format, file);
}

/** Parses a specification; a CliRunError names what is wrong and where. */
export async function parseVarSpec(text: string, format: VarSpecFormat, source: string): Promise<VarSpec> {
  const bad = (why: string): never => {
    throw new CliRunError(`Error parsing variable specification (${source}): ${why}`);
  };
  if (format === 'json') {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      return bad((err as Error).message);
    }
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return bad('want a JSON object');
    const o = raw as Record<string, unknown>;
    return { ...specOf(o['Path'], o['Namespace'], o['Items'] ?? {}, bad, 'Items', false), ...modifyIndexOf(o['ModifyIndex'], bad) };
  }
  let tree: Record<string, unknown>;
  try {
    tree = (await parseHcl(source, text)) as Record<string, unknown>;
  } catch (err) {
    return bad((err as Error).message);
  }
  // The index and time keys are what `var get -out hcl` prints; only modify_index is used.
  const known = ['path', 'namespace', 'items', 'create_index', 'modify_index', 'create_time', 'modify_time'];
  for (const key of Object.keys(tree)) if (!known.includes(key)) bad(`unknown key "${key}" (want ${known.join(', ')})`);
  const blocks = tree['items'];
  if (blocks !== undefined && (!Array.isArray(blocks) || blocks.length !== 1)) bad('want one items block');
  return { ...specOf(tree['path'], tree['namespace'], blocks === undefined ? {} : (blocks as unknown[])[0], bad, 'items', true), ...modifyIndexOf(tree['modify_index'], bad) };
}

function modifyIndexOf(v: unknown, bad: (why: string) => never): { ModifyIndex?: number } {
  if (v === undefined || v === null) return {};
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) return bad(`the modify index must be a non-negative integer, got ${JSON.stringify(v)}`);
  return { ModifyIndex: v };
}

/** The specification's fields checked; `hcl`: numbers and bools convert to strings, as HCL does. */
function specOf(path: unknown, namespace: unknown, items: unknown, bad: (why: string) => never, itemsKey: string, hcl: boolean): VarSpec {
  if (path !== undefined && path !== null && typeof path !== 'string') bad('the path must be a string');
  if (namespace !== undefined && namespace !== null && typeof namespace !== 'string') bad('the namespace must be a string');
  if (typeof items !== 'object' || items === null || Array.isArray(items)) return bad(`${itemsKey} must be a map of strings`);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(items)) {
    if (typeof v === 'string') out[k] = v;
    else if (hcl && (typeof v === 'number' || typeof v === 'boolean')) out[k] = String(v);
    else bad(`${itemsKey}.${k} must be a string`);
  }
  return { ...(typeof path === 'string' && path !== '' ? { Path: path } : {}), ...(typeof namespace === 'string' && namespace !== '' ? { Namespace: namespace } : {}), Items: out };
}

/**
 * The variable a command names: `<path> [<spec>] …` or `<spec> …` (the path then from the
 * specification); the rest of the arguments after it. A path in neither is a usage error.
 * A path given on the command line that differs from the specification's drops the
 * specification's modify index (a copy is a new variable), as Nomad's.
 */
export async function variableArguments(args: readonly string[], inFormat: VarSpecFormat | undefined, cwd: string): Promise<{ path: string; spec: VarSpec | undefined; rest: string[] }> {
  const [first, ...rest] = args;
  if (first === undefined) throw new CliUsageError('Not enough arguments (expected a variable path or specification)');
  let spec: VarSpec | undefined;
  let path: string | undefined;
  if (isSpecReference(first)) spec = await readVarSpec(first, inFormat, cwd);
  else {
    path = first;
    if (rest[0] !== undefined && isSpecReference(rest[0])) spec = await readVarSpec(rest.shift()!, inFormat, cwd);
  }
  if (spec && path !== undefined && spec.Path !== undefined && path !== spec.Path) spec = { ...spec, ModifyIndex: 0 };
  path ??= spec?.Path;
  if (!path) throw new CliUsageError('no variable path: give one as the first argument or in the specification');
  return { path, spec, rest };
}

/**
 * The namespace for a variable: the -namespace flag or environment, else the specification's.
 * `moved` is true when the flag or environment names another namespace than the specification
 * (its modify index then does not apply).
 */
export function withSpecNamespace<F extends { namespace?: string | undefined }>(env: NodeJS.ProcessEnv, opts: F, spec: VarSpec | undefined): { flags: F; moved: boolean } {
  const given = givenNamespace(opts, env);
  if (given === undefined) return { flags: spec?.Namespace ? { ...opts, namespace: spec.Namespace } : opts, moved: false };
  return { flags: opts, moved: spec?.Namespace !== undefined && spec.Namespace !== given };
}
