/**
 * How a docker task joins its allocation's group network (bridge, none, cni/*): through the
 * pause container that owns the namespace, `network_mode = "container:<pause id>"`, as Nomad's
 * driver does. The task inherits the pause container's hostname (the group's `hostname`); the
 * group's `dns` block and hostname come as read-only mounts of the client's resolv.conf and hosts
 * file (Nomad mounts a generated resolv.conf and hosts file the same way).
 *
 * Options that would take the container out of the group network, or that Docker refuses for a
 * container joining another's network, are refused naming the option, before anything is made.
 */
import type { NetworkIsolation } from '../driver.js';
import { badConfig, type Obj } from './config-values.js';

/** Task options a container in the group network cannot have, and why. */
const CONFLICTING: Record<string, string> = {
  // Nomad lets this through and the task silently leaves the group network (its ports,
  // dns and isolation with it); Caravan refuses it.
  network_mode: 'cannot be set in a group network (mode bridge, none or cni/*): the task joins the allocation\'s namespace; set the group\'s network { mode } instead',
  hostname: 'cannot be set in a group network: tasks share the namespace\'s hostname; set the group\'s network { hostname } instead',
  dns_servers: 'cannot be set in a group network: set the group\'s network { dns { servers } } instead',
  dns_search_domains: 'cannot be set in a group network: set the group\'s network { dns { searches } } instead',
  dns_options: 'cannot be set in a group network: set the group\'s network { dns { options } } instead',
  extra_hosts: 'cannot be set in a group network: the tasks share the namespace\'s hosts file',
  mac_address: 'cannot be set in a group network: the namespace\'s interface is the client\'s (CNI)',
  network_aliases: 'cannot be set in a group network: the task is on no docker network',
};

/** Throws BadConfig naming the first option the group network conflicts with. */
export function checkGroupNetworkOptions(o: Obj): void {
  for (const [key, why] of Object.entries(CONFLICTING)) {
    if (o[key] !== undefined && o[key] !== null) throw badConfig(key, why);
  }
}

/** The docker network mode that joins the sandbox. */
export function sandboxNetworkMode(sandboxId: string): string {
  return `container:${sandboxId}`;
}

/** The group network's resolv.conf and hosts file, as read-only bind mounts. */
export function groupNameMounts(iso: NetworkIsolation): Obj[] {
  const out: Obj[] = [];
  if (iso.resolvConf) out.push({ Type: 'bind', Source: iso.resolvConf, Target: '/etc/resolv.conf', ReadOnly: true });
  if (iso.hostsFile) out.push({ Type: 'bind', Source: iso.hostsFile, Target: '/etc/hosts', ReadOnly: true });
  return out;
}
