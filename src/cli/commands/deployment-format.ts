/**
 * The text of deployments as Nomad's CLI prints them: the "ID = …" block with the "Deployed"
 * table (Promoted / Canaries / Auto Revert columns only when they apply), and the list table.
 */
import type { Deployment } from '../../structs/index.js';
import { formatColumns, formatKV, short } from '../format/columns.js';
import { formatIsoTime } from '../format/time-format.js';

/** The per-group "Deployed" table of a deployment. */
export function formatDeployedTable(d: Deployment): string {
  const groups = Object.entries(d.TaskGroups).sort(([a], [b]) => a.localeCompare(b));
  const canaries = groups.some(([, s]) => s.DesiredCanaries > 0);
  const autoRevert = groups.some(([, s]) => s.AutoRevert);
  const header = ['Task Group'];
  if (autoRevert) header.push('Auto Revert');
  if (canaries) header.push('Promoted');
  header.push('Desired');
  if (canaries) header.push('Canaries');
  header.push('Placed', 'Healthy', 'Unhealthy', 'Progress Deadline');
  const rows = groups.map(([name, s]) => {
    const row = [name];
    if (autoRevert) row.push(String(s.AutoRevert));
    if (canaries) row.push(s.DesiredCanaries > 0 ? String(s.Promoted) : 'N/A');
    row.push(String(s.DesiredTotal));
    if (canaries) row.push(String(s.DesiredCanaries));
    row.push(String(s.PlacedAllocs), String(s.HealthyAllocs), String(s.UnhealthyAllocs), formatIsoTime(s.RequireProgressBy));
    return row;
  });
  return formatColumns([header, ...rows]);
}

/** `deployment status` output. */
export function formatDeployment(d: Deployment, verbose = false): string {
  const kv = formatKV([
    ['ID', short(d.ID, verbose)],
    ['Job ID', d.JobID],
    ['Job Version', String(d.JobVersion)],
    ['Status', d.Status],
    ['Description', d.StatusDescription],
  ]);
  if (Object.keys(d.TaskGroups).length === 0) return kv;
  return `${kv}\n\nDeployed\n${formatDeployedTable(d)}`;
}

/** `deployment list` output. */
export function formatDeploymentList(list: Deployment[], verbose = false): string {
  if (list.length === 0) return 'No deployments found';
  const rows = list.map((d) => [short(d.ID, verbose), d.JobID, String(d.JobVersion), d.Status, d.StatusDescription]);
  return formatColumns([['ID', 'Job ID', 'Job Version', 'Status', 'Description'], ...rows]);
}
