/**
 * What Nomad refuses in any service's checks at registration (its ServiceCheck.validate), for
 * Consul and Nomad services alike: a check needs a type (an http one a path, a script one a
 * command), and must poll at an interval and give up after a timeout, each at least a second
 * (TTL checks, which Consul times itself, excepted). The job
 * file parser leaves these to validation, as Nomad's does: Nomad's own jobspec fixtures have
 * checks without them, and parsing such a file must succeed.
 */
import { NANOS_PER_SECOND } from './duration.js';
import { ServiceProvider, type Service } from './service.js';

/** The problems of a list of services' checks: [where, what] pairs naming the service and check. */
export function serviceCheckProblems(services: readonly Service[] | null): [string, string][] {
  const out: [string, string][] = [];
  for (const s of services ?? []) {
    for (const c of s.Checks ?? []) {
      if (c.Type === 'ttl') continue;
      const at = `service "${s.Name}": check "${c.Name}"`;
      // Nomad services name a bad type themselves (nomad-service-validate).
      if (!c.Type) {
        if (s.Provider !== ServiceProvider.Nomad) out.push([at, 'missing required value type ("http", "tcp", "script", "grpc" or "ttl")']);
        continue;
      }
      if (c.Type === 'http' && !c.Path) out.push([at, 'http type must have http path']);
      if (c.Type === 'script' && !c.Command) out.push([at, 'script type must have a valid script path']);
      if (!c.Interval) out.push([at, 'missing required value interval (at least 1s)']);
      else if (c.Interval < NANOS_PER_SECOND) out.push([at, 'interval cannot be less than 1s']);
      if (!c.Timeout) out.push([at, 'missing required value timeout (at least 1s)']);
      else if (c.Timeout < NANOS_PER_SECOND) out.push([at, 'timeout cannot be less than 1s']);
    }
  }
  return out;
}
