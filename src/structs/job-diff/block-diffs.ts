/**
 * Diffs of the nested blocks of groups and tasks: resources and networks, services and their
 * checks, templates, volumes, scaling, vault, dispatch and parameterized-job settings.
 */
import { sortObjects } from './diff-order.js';
import { nullIfEmpty, type ObjectDiff } from './diff-types.js';
import { blockDiff, fieldDiffs, primitiveObjectDiff, stringSetDiff } from './field-diffs.js';
import { canonicalText, flattenAll, flattenPrimitives, isPlainObject, type Flat } from './flatten.js';
import { pairByKey } from './pair-by-key.js';

type Block = Record<string, unknown>;

function blocks(value: unknown): Block[] {
  return Array.isArray(value) ? value.filter(isPlainObject) : [];
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function field(block: Block | null, name: string): unknown {
  return block === null ? undefined : block[name];
}

/** A free-form map (a task's driver config, a scaling policy) flattened completely. */
export function freeFormDiff(name: string, oldMap: unknown, newMap: unknown, contextual: boolean): ObjectDiff | null {
  const older = isPlainObject(oldMap) && Object.keys(oldMap).length > 0 ? oldMap : null;
  const newer = isPlainObject(newMap) && Object.keys(newMap).length > 0 ? newMap : null;
  if (canonicalText(older) === canonicalText(newer)) return null;
  return {
    Type: older === null ? 'Added' : newer === null ? 'Deleted' : 'Edited',
    Name: name,
    Fields: nullIfEmpty(fieldDiffs(flattenAll(oldMap ?? {}), flattenAll(newMap ?? {}), contextual)),
    Objects: null,
  };
}

/** Ports matched by label; a dynamic port's value is the scheduler's, not the user's. */
function portDiffs(oldPorts: unknown, newPorts: unknown, dynamic: boolean, contextual: boolean): ObjectDiff[] {
  const filter = dynamic ? ['Value'] : [];
  const name = dynamic ? 'Dynamic Port' : 'Static Port';
  return keyedDiffs(oldPorts, newPorts, 'Label', (o, n) => primitiveObjectDiff(o ?? undefined, n ?? undefined, filter, name, contextual));
}

function dnsFlat(dns: Block): Flat {
  const flat: Flat = new Map();
  for (const key of ['Servers', 'Searches', 'Options']) {
    const list = strings(dns[key]);
    if (list.length > 0) flat.set(key, list.join(','));
  }
  return flat;
}

function networkDiff(oldNet: Block | null, newNet: Block | null, contextual: boolean): ObjectDiff | null {
  return blockDiff('Network', oldNet, newNet, contextual, {
    flatten: (n) => flattenPrimitives(n, ['Device', 'CIDR', 'IP']),
    children: (o, n, c) => [
      ...portDiffs(field(o, 'ReservedPorts'), field(n, 'ReservedPorts'), false, c),
      ...portDiffs(field(o, 'DynamicPorts'), field(n, 'DynamicPorts'), true, c),
      blockDiff('DNS', (field(o, 'DNS') as Block | null | undefined) ?? null, (field(n, 'DNS') as Block | null | undefined) ?? null, c, { flatten: dnsFlat }),
    ],
  });
}

/** Networks compared as sets: an edited network shows as one deleted and one added. */
export function networkDiffs(oldNets: unknown, newNets: unknown, contextual: boolean): ObjectDiff[] {
  const pairs = pairByKey(blocks(oldNets), blocks(newNets), canonicalText);
  // Matched by content: a pair found on both sides is unchanged.
  return compactSorted(pairs.map(([o, n]) => (o && n ? null : networkDiff(o, n, contextual))));
}

function deviceDiffs(oldDevices: unknown, newDevices: unknown, contextual: boolean): ObjectDiff[] {
  return keyedDiffs(oldDevices, newDevices, 'Name', (o, n) => blockDiff('Device', o, n, contextual));
}

export function resourcesDiff(oldRes: unknown, newRes: unknown, contextual: boolean): ObjectDiff | null {
  return blockDiff('Resources', asBlock(oldRes), asBlock(newRes), contextual, {
    children: (o, n, c) => [...networkDiffs(field(o, 'Networks'), field(n, 'Networks'), c), ...deviceDiffs(field(o, 'Devices'), field(n, 'Devices'), c)],
  });
}

function checkDiffs(oldChecks: unknown, newChecks: unknown, contextual: boolean): ObjectDiff[] {
  const checkDiff = (o: Block | null, n: Block | null): ObjectDiff | null =>
    blockDiff('Check', o, n, contextual, {
      children: (oc, nc, c) => [
        freeFormDiff('Header', field(oc, 'Header'), field(nc, 'Header'), c),
        blockDiff('CheckRestart', asBlock(field(oc, 'CheckRestart')), asBlock(field(nc, 'CheckRestart')), c),
      ],
    });
  return keyedDiffs(oldChecks, newChecks, 'Name', checkDiff);
}

function serviceDiff(oldSvc: Block | null, newSvc: Block | null, contextual: boolean): ObjectDiff | null {
  return blockDiff('Service', oldSvc, newSvc, contextual, {
    children: (o, n, c) => [
      stringSetDiff(strings(field(o, 'CanaryTags')), strings(field(n, 'CanaryTags')), 'CanaryTags', c),
      stringSetDiff(strings(field(o, 'Tags')), strings(field(n, 'Tags')), 'Tags', c),
      ...checkDiffs(field(o, 'Checks'), field(n, 'Checks'), c),
      blockDiff('CheckRestart', asBlock(field(o, 'CheckRestart')), asBlock(field(n, 'CheckRestart')), c),
    ],
  });
}

/**
 * Services have no stable identity: an old service is matched to the unmatched new one that
 * shares the most of name (3), port label (2) and position (1), needing more than 2.
 */
export function serviceDiffs(oldList: unknown, newList: unknown, contextual: boolean): ObjectDiff[] {
  const older = blocks(oldList);
  const newer = blocks(newList);
  if (older.length === 1 && newer.length === 1) {
    const d = serviceDiff(older[0]!, newer[0]!, contextual);
    return d ? [d] : [];
  }
  const matchedNew = new Array<boolean>(newer.length).fill(false);
  const diffs: ObjectDiff[] = [];
  older.forEach((svc, oldIndex) => {
    let best = -1;
    let bestScore = 2;
    newer.forEach((candidate, i) => {
      if (matchedNew[i]) return;
      const score = (i === oldIndex ? 1 : 0) + (candidate['PortLabel'] === svc['PortLabel'] ? 2 : 0) + (candidate['Name'] === svc['Name'] ? 3 : 0);
      if (score > bestScore) {
        bestScore = score;
        best = i;
      }
    });
    if (best < 0) pushIf(diffs, serviceDiff(svc, null, contextual));
    else {
      matchedNew[best] = true;
      pushIf(diffs, serviceDiff(svc, newer[best]!, contextual));
    }
  });
  newer.forEach((svc, i) => {
    if (!matchedNew[i]) pushIf(diffs, serviceDiff(null, svc, contextual));
  });
  return sortObjects(diffs);
}

function templateFlat(t: Block): Flat | null {
  return flattenPrimitives(t);
}

function templateDiff(oldT: Block | null, newT: Block | null, contextual: boolean): ObjectDiff | null {
  return blockDiff('Template', oldT, newT, contextual, {
    flatten: templateFlat,
    children: (o, n, c) => [
      deepBlockDiff('Template', field(o, 'Wait'), field(n, 'Wait'), c),
      blockDiff('ChangeScript', asBlock(field(o, 'ChangeScript')), asBlock(field(n, 'ChangeScript')), c, {
        children: (oc, nc, cc) => [stringSetDiff(strings(field(oc, 'Args')), strings(field(nc, 'Args')), 'Args', cc)],
      }),
    ],
  });
}

/** Templates are matched by destination path. */
export function templateDiffs(oldList: unknown, newList: unknown, contextual: boolean): ObjectDiff[] {
  const older = blocks(oldList);
  const newer = blocks(newList);
  if (older.length === 1 && newer.length === 1) {
    const d = templateDiff(older[0]!, newer[0]!, contextual);
    return d ? [d] : [];
  }
  const matchedNew = new Array<boolean>(newer.length).fill(false);
  const diffs: ObjectDiff[] = [];
  for (const t of older) {
    const i = newer.findIndex((candidate, j) => !matchedNew[j] && candidate['DestPath'] === t['DestPath']);
    if (i < 0) pushIf(diffs, templateDiff(t, null, contextual));
    else {
      matchedNew[i] = true;
      pushIf(diffs, templateDiff(t, newer[i]!, contextual));
    }
  }
  newer.forEach((t, i) => {
    if (!matchedNew[i]) pushIf(diffs, templateDiff(null, t, contextual));
  });
  return sortObjects(diffs);
}

/** A block whose nested values are all shown (`Min`, `Max` of a template's wait). */
function deepBlockDiff(name: string, oldBlock: unknown, newBlock: unknown, contextual: boolean): ObjectDiff | null {
  return blockDiff(name, asBlock(oldBlock), asBlock(newBlock), contextual, { flatten: (b) => flattenAll(b) });
}

export function vaultDiff(oldVault: unknown, newVault: unknown, contextual: boolean): ObjectDiff | null {
  return blockDiff('Vault', asBlock(oldVault), asBlock(newVault), contextual, {
    children: (o, n, c) => [stringSetDiff(strings(field(o, 'Policies')), strings(field(n, 'Policies')), 'Policies', c)],
  });
}

/** A group's volume requests, matched by name. */
export function volumeDiffs(oldVolumes: unknown, newVolumes: unknown, contextual: boolean): ObjectDiff[] {
  const older = isPlainObject(oldVolumes) ? oldVolumes : {};
  const newer = isPlainObject(newVolumes) ? newVolumes : {};
  const volumeDiff = (o: unknown, n: unknown): ObjectDiff | null =>
    blockDiff('Volume', asBlock(o), asBlock(n), contextual, {
      children: (ov, nv, c) => [
        blockDiff('MountOptions', asBlock(field(ov, 'MountOptions')), asBlock(field(nv, 'MountOptions')), c, {
          children: (om, nm, cc) => [stringSetDiff(strings(field(om, 'MountFlags')), strings(field(nm, 'MountFlags')), 'MountFlags', cc)],
        }),
      ],
    });
  const pairs = pairByKey(Object.entries(older), Object.entries(newer), ([name]) => name);
  return pairs.map(([o, n]) => volumeDiff(o?.[1], n?.[1])).filter((d): d is ObjectDiff => d !== null);
}

export function scalingDiff(oldScaling: unknown, newScaling: unknown, contextual: boolean): ObjectDiff | null {
  const filter = ['CreateIndex', 'ModifyIndex', 'ID', 'Type', 'Target[Job]', 'Target[Group]', 'Target[Namespace]'];
  const diff = blockDiff('Scaling', asBlock(oldScaling), asBlock(newScaling), contextual, {
    flatten: (s) => flattenPrimitives(s, filter),
    children: (o, n, c) => [freeFormDiff('Policy', field(o, 'Policy'), field(n, 'Policy'), c)],
    sortChildren: true,
  });
  return diff;
}

export function parameterizedJobDiff(oldConfig: unknown, newConfig: unknown, contextual: boolean): ObjectDiff | null {
  return blockDiff('ParameterizedJob', asBlock(oldConfig), asBlock(newConfig), contextual, {
    children: (o, n, c) => [
      stringSetDiff(strings(field(o, 'MetaOptional')), strings(field(n, 'MetaOptional')), 'MetaOptional', c),
      stringSetDiff(strings(field(o, 'MetaRequired')), strings(field(n, 'MetaRequired')), 'MetaRequired', c),
    ],
  });
}

export function asBlock(value: unknown): Block | null {
  return isPlainObject(value) ? value : null;
}

function pushIf(list: ObjectDiff[], d: ObjectDiff | null): void {
  if (d) list.push(d);
}

function compactSorted(diffs: (ObjectDiff | null)[]): ObjectDiff[] {
  return sortObjects(diffs.filter((d): d is ObjectDiff => d !== null));
}

/** Blocks of two lists matched by the value of `keyField`, each pair diffed by `diff`, sorted. */
function keyedDiffs(oldList: unknown, newList: unknown, keyField: string, diff: (o: Block | null, n: Block | null) => ObjectDiff | null): ObjectDiff[] {
  const pairs = pairByKey(blocks(oldList), blocks(newList), (b) => String(b[keyField] ?? ''));
  return compactSorted(pairs.map(([o, n]) => diff(o, n)));
}
