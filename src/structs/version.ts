/**
 * The versions this build reports, defined once: Caravan's own (the CLI's `version`, node
 * stubs, `/v1/agent/self`, member tags) and the Nomad version whose API it speaks (the
 * `nomad.version` node attribute that Nomad's clients and constraints read).
 */

/** Caravan's version; a unit test keeps it equal to package.json's. */
export const CARAVAN_VERSION = '0.1.0';

/** The Nomad API version Caravan is compatible with. */
export const NOMAD_COMPAT_VERSION = '1.9.0';
