/**
 * What Nomad refuses in a `provider = "nomad"` service at registration (its
 * Service.validateNomadService and ServiceCheck.validateNomad): checks other than http and tcp,
 * `expose`, `on_update = "ignore_warnings"`, `check_restart.ignore_warnings` (native checks have
 * no warnings), a check's `address_mode = "driver"`, and Connect. Consul services are not
 * checked here.
 */
import type { Service } from './service.js';
import { ServiceProvider } from './service.js';

/** The problems of a list of services: [where, what] pairs, `where` naming the service and check. */
export function nomadServiceProblems(services: readonly Service[] | null): [string, string][] {
  const out: [string, string][] = [];
  for (const s of services ?? []) {
    if (s.Provider !== ServiceProvider.Nomad) continue;
    const at = `service "${s.Name}"`;
    if ((s as { Connect?: unknown }).Connect) out.push([at, 'Service with provider nomad cannot include Connect blocks']);
    for (const c of s.Checks ?? []) {
      const cat = `${at}: check "${c.Name}"`;
      if (c.Type !== 'http' && c.Type !== 'tcp') out.push([cat, `invalid type (${JSON.stringify(c.Type)}), must be one of "tcp", "http"`]);
      if (c.Expose) out.push([cat, 'expose may only be set for Consul service checks']);
      if (c.OnUpdate === 'ignore_warnings') out.push([cat, 'on_update may only be set to ignore_warnings for Consul service checks']);
      if (c.CheckRestart?.IgnoreWarnings) out.push([cat, 'ignore_warnings on check_restart only supported for Consul service checks']);
      if (c.AddressMode === 'driver') out.push([cat, 'address_mode = driver not supported for checks of provider nomad services']);
    }
  }
  return out;
}
