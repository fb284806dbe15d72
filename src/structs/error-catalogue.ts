/**
 * Every error code Caravan raises, in one table: the HTTP status an API answer carries, the
 * message template (`{name}` placeholders are the error's typed fields) and whether retrying
 * may help. Statuses are chosen here and nowhere else; callers match errors by `code`.
 * Nomad's texts are kept where its clients read them ("job not found", "Permission denied").
 * A test (test/structs/error-catalogue.test.ts) fails when a code is undocumented in this
 * table or never thrown in src/.
 */

/** One row of the catalogue. */
export interface ErrorSpec {
  /** The HTTP status of an answer carrying this error (500 for errors that never should). */
  readonly status: number;
  /** The message, with `{field}` placeholders filled from the error's fields. */
  readonly message: string;
  /** Whether the same operation may succeed when retried unchanged. */
  readonly recoverable: boolean;
}

// A row; the message keeps its literal type, so the placeholders type the error's fields.
function e<M extends string>(status: number, message: M, recoverable = false): { readonly status: number; readonly message: M; readonly recoverable: boolean } {
  return { status, message, recoverable };
}

/** The catalogue: code → status, message template, recoverable. */
export const ErrorCatalogue = {
  // ---- server core ----
  /** The server is stopping; the request was not applied. */
  SERVER_CLOSED: e(503, 'server is shutting down', true),
  /** A write reached a server that is not the leader (a follower never appends). */
  NOT_LEADER: e(503, 'not the leader: writes go to the leader at {leader}', true),
  /**
   * A write or consistent read while the cluster has no leader (an election is under way, or
   * etcd is unreachable). Nomad's structs.ErrNoLeader, a plain error its HTTP layer answers 500.
   */
  NO_LEADER: e(500, 'No cluster leader', true),
  /**
   * A read without ?stale on a leader that has not caught up with the log yet (its leader
   * duties have not started): Nomad's structs.ErrNotReadyForConsistentReads, answered 500.
   */
  NOT_READY_FOR_CONSISTENT_READS: e(500, 'Not ready to serve consistent reads', true),
  /** A command failed its shape check before it was appended to the log. */
  COMMAND_INVALID: e(500, '{field}: {reason}'),
  /** The log refused or failed an append. */
  LOG_WRITE_FAILED: e(500, 'log write failed: {reason}', true),
  /** Applying a committed log entry threw; nothing of it was applied. */
  APPLY_FAILED: e(500, 'applying log entry {index} failed: {reason}'),
  /** A worker's write carried a broker lease that is no longer outstanding. */
  EVAL_TOKEN_MISMATCH: e(409, 'evaluation {evalId}: token is not outstanding (stale worker)'),
  /** EnforceIndex with index 0, but the job exists. */
  JOB_EXISTS: e(409, 'Enforcing job modify index 0: job already exists'),
  /** EnforceIndex with an index that is not the job's JobModifyIndex. */
  JOB_MODIFY_INDEX_CONFLICT: e(409, 'Enforcing job modify index {expected}: job exists with conflicting job modify index: {actual}'),
  /** A job version that is not stored (revert, stable). */
  JOB_VERSION_NOT_FOUND: e(404, 'job "{job}" in namespace "{namespace}" at version {version} not found'),
  /** A revert, stability or scale request that does not fit the job; the reason names it. */
  JOB_ACTION_INVALID: e(400, '{reason}'),
  /** The operator turned job registration off (SchedulerConfiguration.RejectJobRegistration). */
  JOB_REGISTRATION_REJECTED: e(400, 'job registration, dispatch, and scale are disabled by the scheduler configuration'),
  /** A scheduler configuration update of the wrong shape. */
  SCHEDULER_CONFIG_INVALID: e(400, '{field}: {reason}'),
  /** An autopilot configuration PUT of the wrong shape (Nomad's text). */
  AUTOPILOT_CONFIG_INVALID: e(400, 'Error parsing autopilot config: {field} {reason}'),
  /** A namespace create/update of the wrong shape. */
  NAMESPACE_INVALID: e(400, '{field}: {reason}'),
  /** No namespace of that name. */
  NAMESPACE_NOT_FOUND: e(404, 'namespace "{namespace}" not found'),
  /** A job registered into a namespace that does not exist (Nomad's text). */
  NAMESPACE_NONEXISTENT: e(400, 'job "{job}" is in nonexistent namespace "{namespace}"'),
  /** A job whose task drivers its namespace's capabilities refuse. */
  NAMESPACE_CAPABILITY_REFUSED: e(400, '{reason}'),
  /** Deleting a namespace that still holds non-terminal jobs (Nomad's text). */
  NAMESPACE_IN_USE: e(400, 'namespace "{namespace}" has non-terminal jobs in regions: [{region}]'),
  /** Deleting a namespace that still holds host volumes (Nomad's text). */
  NAMESPACE_HAS_VOLUMES: e(400, 'namespace "{namespace}" has volumes associated with it in regions: [{region}]'),
  /** Deleting the default namespace. */
  NAMESPACE_DEFAULT_UNDELETABLE: e(400, 'can not delete default namespace'),
  /** No job of that ID in the namespace. */
  JOB_NOT_FOUND: e(404, 'job "{job}" not found'),
  /** Periodic and parameterized jobs are never evaluated directly. */
  JOB_NOT_EVALUABLE: e(400, 'can\'t evaluate periodic or parameterized job "{job}"'),
  /** A submitted job failed decoding, canonicalization or validation; `reason` lists every problem. */
  JOB_INVALID: e(400, '{reason}'),
  /** Force-launching a job that is not periodic. */
  JOB_NOT_PERIODIC: e(400, 'can\'t force run non-periodic job "{job}"'),
  /** Force-launching a stopped periodic job. */
  JOB_STOPPED: e(400, 'can\'t force run stopped periodic job "{job}"'),
  /** A dispatch request that does not fit the parameterized job. */
  DISPATCH_INVALID: e(400, '{reason}'),
  /** The job's type has no scheduler. */
  NO_SCHEDULER: e(400, '{reason}'),
  /** No allocation of that ID. */
  ALLOC_NOT_FOUND: e(404, 'allocation "{alloc}" not found'),
  /** A client's report (node registration, allocation update) of the wrong shape; `reason` names the field. */
  CLIENT_REPORT_INVALID: e(400, '{reason}'),
  /** A client call for a node without the node's SecretID (Nomad's text). */
  NODE_SECRET_MISMATCH: e(403, 'Permission denied'),
  /**
   * A new node's registration the server's client_introduction enforcement refuses: no
   * introduction token under "strict", or a token that is invalid, expired or bound to another
   * node name or pool. `reason` says which, never the token.
   */
  NODE_INTRODUCTION_REFUSED: e(403, 'Permission denied: node registration refused: {reason}'),
  /** An introduction token that does not verify; `reason` says why (malformed, signature, expired…). */
  INTRODUCTION_TOKEN_INVALID: e(403, 'introduction token {reason}'),
  /** A request for an introduction token of the wrong shape (PUT /v1/acl/identity/client-introduction-token). */
  INTRODUCTION_REQUEST_INVALID: e(400, '{reason}'),
  /** A workload identity JWT that does not verify against the keyring, or whose allocation is gone. */
  WORKLOAD_IDENTITY_INVALID: e(403, 'workload identity {reason}'),
  /** No root key of that ID in the keyring (DELETE /v1/operator/keyring/key/:id). */
  ROOT_KEY_NOT_FOUND: e(404, 'root key "{keyId}" not found'),
  /** The active root key signs every new identity: rotate first (Nomad refuses it too). */
  ROOT_KEY_ACTIVE: e(400, 'active root key "{keyId}" cannot be deleted: rotate the keyring first'),
  /** A keyring request of the wrong shape (rotate options). */
  KEYRING_REQUEST_INVALID: e(400, '{reason}'),
  /** The keyring has no active key yet (the leader makes one when it takes office). */
  ROOT_KEY_UNAVAILABLE: e(503, 'no active root key to sign workload identities: {reason}', true),
  /** No node of that ID. */
  NODE_NOT_FOUND: e(404, 'node "{node}" not found'),
  /** A node pool of the wrong shape (name, description, meta, scheduler configuration). */
  NODE_POOL_INVALID: e(400, '{reason}'),
  /** DELETE /v1/evaluations refused: broker not paused, an unknown or unsafe evaluation, IDs and filter both or neither. */
  EVAL_DELETE_REFUSED: e(400, '{reason}'),
  /** A version tag request that does not fit the job (empty name, a name another version carries). */
  JOB_VERSION_TAG_INVALID: e(400, '{reason}'),
  /** Unsetting a tag no version of the job carries. */
  JOB_VERSION_TAG_NOT_FOUND: e(404, 'tag "{tag}" not found on job "{job}"'),
  /** A variable write or path Nomad refuses (its texts: "invalid path …", "empty variables are invalid"). */
  VARIABLE_INVALID: e(400, '{reason}'),
  /** A client's service registration of the wrong shape (name, address, port, tags). */
  SERVICE_REGISTRATION_INVALID: e(400, '{field}: {reason}'),
  /** No service registration of that ID under that service name (DELETE /v1/service/:name/:id). */
  SERVICE_REGISTRATION_NOT_FOUND: e(404, 'service registration not found'),
  /** A `?choose` that is not `<number>|<key>` (Nomad's text). */
  SERVICE_CHOOSE_INVALID: e(400, 'failed to choose services: invalid format for choose parameter'),
  /** No variable at that path (Nomad's text). */
  VARIABLE_NOT_FOUND: e(404, 'variable not found'),
  // ---- dynamic host volumes ----
  /** A dynamic host volume request (or a plugin's parameters) that cannot be admitted; names the field. */
  HOST_VOLUME_INVALID: e(400, '{reason}'),
  /** No dynamic host volume with that ID (Nomad's text). */
  HOST_VOLUME_NOT_FOUND: e(404, 'volume not found'),
  /** A delete of a volume that allocations still claim (Nomad refuses it too). */
  HOST_VOLUME_IN_USE: e(400, 'volume {id} in use by allocations: {allocs}'),
  /** No node can take the volume (none meets its pool, constraints and plugin), or the named one cannot. */
  HOST_VOLUME_NO_NODE: e(400, '{reason}'),
  /** The node's plugin failed to create or delete the volume. */
  HOST_VOLUME_PLUGIN_FAILED: e(500, '{reason}'),
  /** The node did not act on a create or delete in time; it will when it can (the volume says how far it got). */
  HOST_VOLUME_TIMEOUT: e(504, 'node {node} did not {op} volume {id} within {seconds}s; it will when it reaches the servers', true),
  /** No node pool of that name. */
  NODE_POOL_NOT_FOUND: e(404, 'node pool "{pool}" not found'),
  /** Changing or deleting `all` or `default` (Nomad's wording). */
  NODE_POOL_BUILTIN: e(400, '{action} built-in node pool "{pool}" is not allowed'),
  /** Deleting a pool that nodes or non-terminal jobs still use. */
  NODE_POOL_IN_USE: e(400, 'node pool "{pool}" has {what}'),
  /** A job registered or planned in a node pool that does not exist. */
  JOB_NODE_POOL_UNKNOWN: e(400, 'job "{job}" is in nonexistent node pool "{pool}"'),
  /** A heartbeat naming an unknown node status. */
  NODE_STATUS_INVALID: e(400, 'Status {status} is not a node status'),
  /** An eligibility that is neither eligible nor ineligible. */
  NODE_ELIGIBILITY_INVALID: e(400, 'eligibility: must be "eligible" or "ineligible", got "{eligibility}"'),
  /** A drain request that cannot be applied. */
  NODE_DRAIN_INVALID: e(400, '{field}: {reason}'),
  /** No deployment of that ID. */
  DEPLOYMENT_NOT_FOUND: e(404, 'deployment "{deployment}" not found'),
  /** A deployment action that does not apply to the deployment. */
  DEPLOYMENT_INVALID: e(400, '{reason}'),
  /** A cron expression that cannot be parsed. */
  CRON_SPEC_INVALID: e(400, '{reason}'),
  /** The log is closed. */
  LOG_CLOSED: e(503, '{reason}', true),
  /** The log's storage failed. */
  LOG_IO: e(500, '{reason}', true),
  /** This server lost leadership: the log's fencing check refused the write. */
  LOG_FENCED: e(503, 'not the leader: {reason}', true),
  /** Entries asked for were compacted into a snapshot. */
  LOG_COMPACTED: e(500, '{reason}', true),
  /** An etcd watch ended (stream failed or ended, canceled by etcd); its owner reads afresh and watches again. */
  ETCD_WATCH_ENDED: e(500, 'etcd watch on {range} ended: {reason}', true),
  /** A leader-election lease etcd no longer keeps (expired, revoked, or unconfirmed for twice its TTL); the server campaigns again with a new one. */
  ETCD_LEASE_LOST: e(500, 'etcd lease {lease} lost: {reason}', true),
  /** The worker thread that keeps this server's etcd leases alive failed; its leases count as lost and a new worker takes over. */
  ETCD_LEASE_KEEPER_FAILED: e(500, 'etcd lease keep-alive worker failed: {reason}', true),
  /** A snapshot write was abandoned. */
  SNAPSHOT_ABORTED: e(500, '{reason}', true),
  /** A snapshot cannot be read back. */
  SNAPSHOT_CORRUPT: e(500, '{reason}'),
  /** A snapshot file sent to be restored is not one Caravan reads (nothing changed). */
  SNAPSHOT_INVALID: e(400, 'snapshot not restored: {reason}'),
  /** A plan carried a stale broker token. */
  BAD_TOKEN: e(409, '{reason}'),
  /** The plan applier is stopping. */
  APPLIER_CLOSED: e(503, '{reason}', true),
  /** A plan was checked partly against a state a snapshot restore replaced; its worker plans again. */
  STATE_RESTORED: e(409, '{reason}', true),
  /** A worker waited too long for the state to catch up. */
  SYNC_TIMEOUT: e(503, '{reason}', true),
  /** An event-stream subscriber fell too far behind and was dropped. */
  SUBSCRIBER_TOO_SLOW: e(500, '{reason}', true),
  /** The event broker is closed. */
  BROKER_CLOSED: e(503, '{reason}', true),
  /** An eval ack/nack for an eval not outstanding. */
  EVAL_NOT_OUTSTANDING: e(409, '{reason}'),
  /** An eval ack/nack with the wrong token. */
  TOKEN_MISMATCH: e(409, '{reason}'),
  /** The eval broker is disabled (not the leader). */
  BROKER_DISABLED: e(503, '{reason}', true),

  // ---- HTTP layer ----
  /** A bad parameter or body field; the message names it. */
  HTTP_BAD_REQUEST: e(400, '{reason}'),
  /** The body is not JSON. */
  HTTP_MALFORMED_JSON: e(400, 'failed to parse JSON request body: {reason}'),
  /** The body exceeds the limit. */
  HTTP_BODY_TOO_LARGE: e(413, 'Request body is too large'),
  /** The body's content type is not accepted. */
  HTTP_UNSUPPORTED_MEDIA_TYPE: e(415, 'Unsupported Media Type: {reason}'),
  /** A path no route serves (Go's http.NotFound text, as Nomad answers). */
  HTTP_ROUTE_NOT_FOUND: e(404, '404 page not found'),
  /** Nomad's "<thing> not found". */
  HTTP_NOT_FOUND: e(404, '{what} not found'),
  /** A route that exists with other methods. */
  HTTP_METHOD_NOT_ALLOWED: e(405, 'Invalid method {method} for {path}'),
  /** A server route on an agent that runs no server. */
  HTTP_NO_SERVER: e(400, 'this agent is not a server: no server API available'),
  /** A client route on an agent that runs no client. */
  HTTP_NO_CLIENT: e(501, 'this agent is not a client: {reason}'),
  /** A feature this server does not offer. */
  HTTP_NOT_SUPPORTED: e(501, '{feature} is not supported by this server'),
  /** The client holding an allocation could not be reached. */
  HTTP_FORWARD_FAILED: e(502, 'cannot reach the client of node {node} at {address}: {reason}', true),
  /** No server answered a client agent's proxied request. */
  HTTP_NO_SERVER_REACHABLE: e(503, 'no server reachable: {reason}', true),
  /** The web UI's files are missing from the build. */
  HTTP_UI_NOT_BUILT: e(503, 'the web UI is not built (no {index}): run npm run build', true),
  /** An agent whose server knows no leader (GET /v1/agent/health). */
  HTTP_AGENT_UNHEALTHY: e(500, 'No cluster leader'),
  /** Anything unexpected. */
  HTTP_INTERNAL: e(500, '{reason}'),
  /** A list `filter=` expression that does not parse; the reason names the problem and where. */
  HTTP_BAD_FILTER: e(400, 'failed to read filter expression: {reason}'),
  /** An endpoint Nomad serves only in its Enterprise edition (Nomad's text and status). */
  HTTP_ENTERPRISE_ONLY: e(501, 'Nomad Enterprise only endpoint'),
  /** A token without the capability a route needs (Nomad's text and status). */
  ACL_PERMISSION_DENIED: e(403, 'Permission denied'),
  /**
   * A token without a capability the server can name (an exec into a task without filesystem
   * isolation needs alloc-node-exec): Nomad's text first, so clients matching it still do.
   */
  ACL_CAPABILITY_MISSING: e(403, 'Permission denied: the token lacks the "{capability}" capability in namespace "{namespace}"'),
  /**
   * A job mounting a host volume its token's `host_volume` rules do not allow (Nomad answers a
   * bare "Permission denied"; the volume and the missing capability are named after it).
   */
  ACL_HOST_VOLUME_DENIED: e(403, 'Permission denied: group "{group}" mounts host volume "{volume}", which needs the "{capability}" capability'),
  /** A secret that is no token's (Nomad's text and status). */
  ACL_TOKEN_NOT_FOUND: e(403, 'ACL token not found'),
  /** A token past its ExpirationTime (Nomad's text and status). */
  ACL_TOKEN_EXPIRED: e(403, 'ACL token expired'),
  /** An event stream ended because its token was deleted or no longer reads it (Nomad's ErrSubscriptionClosed text). */
  ACL_SUBSCRIPTION_CLOSED: e(403, 'subscription closed by server, client should resubscribe', true),
  /** A second bootstrap without the reset file naming this index (Nomad's text). */
  ACL_BOOTSTRAP_DONE: e(400, 'ACL bootstrap already done (reset index: {resetIndex})'),
  /** A policy whose rules do not parse or validate; the reason names the rule and line. */
  ACL_POLICY_INVALID: e(400, 'policy "{policy}": {reason}'),
  /** A token, policy or role request of the wrong shape; the reason names the field. */
  ACL_REQUEST_INVALID: e(400, '{reason}'),
  /** No ACL token, policy or role of that ID or name (Nomad's texts: "ACL token not found"). */
  ACL_OBJECT_NOT_FOUND: e(404, 'ACL {what} not found'),
  /** A Task API (secrets/api.sock) request without a token: it always needs one, ACLs on or off (Nomad's 401). */
  TASK_API_UNAUTHENTICATED: e(401, 'Unauthorized'),
  /** A Task API request whose token is no ACL token or workload identity of the cluster, or the anonymous one (Nomad's 403). */
  TASK_API_FORBIDDEN: e(403, 'Forbidden'),
  /** A Task API request for an agent-to-agent route (/v1/internal/*): a task is never an agent. */
  TASK_API_ROUTE_REFUSED: e(403, 'Permission denied: {path} is not served on the Task API'),
  /** The Task API could not authenticate a request: its servers did not answer (Nomad's 500). */
  TASK_API_AUTH_FAILED: e(500, 'Server error authenticating request: {reason}', true),
  /** An ACL endpoint while ACLs are off (Nomad's text and status). */
  HTTP_ACL_DISABLED: e(400, 'ACL support disabled'),
  /** An agent-to-agent route called without a verified client certificate (tls { rpc = true }). */
  HTTP_CLIENT_CERT_REQUIRED: e(403, 'Permission denied: {path} needs a client certificate signed by the cluster CA (tls.rpc)'),
  /**
   * A gossip keyring operation while gossip encryption is off — always, for Caravan's servers do
   * not gossip: every server "reports failure", in Serf's words, and Nomad answers 500.
   */
  HTTP_GOSSIP_KEYRING_DISABLED: e(500, '{failed}/{nodes} nodes reported failure'),
  /** A gossip key that is not base64 (Go's base64 error, which Nomad answers 500). */
  HTTP_GOSSIP_KEY_INVALID: e(500, 'illegal base64 data at input byte {offset}'),
  /** A /v1/agent/pprof profile Caravan has no Node.js equivalent of (Nomad's text and status). */
  HTTP_UNKNOWN_PROFILE: e(404, 'Unknown profile: {name}'),
  /** A well-formed request the server will not act on; the reason names the value (Nomad's 422). */
  HTTP_UNPROCESSABLE: e(422, '{reason}'),
  /** A request naming both a node and a server to act on (Nomad's text). */
  HTTP_NODE_AND_SERVER: e(400, 'Cannot target node and server simultaneously'),
  /** A request for a region this agent is not in (Nomad's text; there is one region). */
  HTTP_NO_REGION_PATH: e(400, 'No path to region "{region}"'),
  /** An allocation this agent cannot find (Nomad's "Unknown allocation"). */
  ALLOC_UNKNOWN: e(404, 'Unknown allocation "{alloc}"{detail}'),
  /** An exec frame that cannot be decoded. */
  EXEC_BAD_FRAME: e(400, 'bad exec frame: {reason}'),
  /** A fuzzy search text shorter than the minimum. */
  SEARCH_FUZZY_TEXT_TOO_SHORT: e(400, 'invalid value for "Text": fuzzy search query must be at least {min} characters, got {length}'),
  /** A search context that does not exist. */
  SEARCH_BAD_CONTEXT: e(400, 'invalid value for "Context": {context} (want one of {contexts})'),
  /** A file-system path that does not exist. */
  ALLOC_FS_NOT_FOUND: e(404, '{reason}'),
  /** A file operation on a directory. */
  ALLOC_FS_IS_DIRECTORY: e(400, '{reason}'),
  /** A directory operation on a file. */
  ALLOC_FS_NOT_DIRECTORY: e(400, '{reason}'),

  /** A task file path that cannot be used. */
  CONFINE_BAD_PATH: e(400, '{reason}'),
  /** A task file path that leaves the allowed directory or goes through a symlink. */
  CONFINE_PATH_ESCAPE: e(403, '{reason}'),
  /** A task file path that does not exist. */
  CONFINE_NOT_FOUND: e(404, '{reason}'),
  /** A task file that is not a regular file (a FIFO, a device). */
  CONFINE_NOT_REGULAR_FILE: e(403, '{reason}'),

  // ---- client (the agent's client role) ----
  /** The client holds no such allocation. */
  CLIENT_ALLOC_NOT_FOUND: e(404, '{reason}'),
  /** The allocation has no such task. */
  CLIENT_TASK_NOT_FOUND: e(404, '{reason}'),
  /** The task is not running. */
  CLIENT_TASK_NOT_RUNNING: e(400, '{reason}', true),
  /** A signal name the client does not know. */
  CLIENT_BAD_SIGNAL: e(400, '{reason}'),
  /** Garbage collection of an allocation that still runs here. */
  CLIENT_ALLOC_NOT_TERMINAL: e(400, '{reason}'),
  /** A dynamic node metadata update of the wrong shape (bad key or value). */
  CLIENT_META_INVALID: e(400, '{reason}'),
  /** A task action (`nomad action NAME`) the task does not declare. */
  CLIENT_ACTION_NOT_FOUND: e(404, '{reason}'),
  /** A task action asked for through a job the allocation does not belong to. */
  CLIENT_ACTION_JOB_MISMATCH: e(400, '{reason}'),
  /** A client route used before the client started. */
  CLIENT_NOT_READY: e(503, '{reason}', true),
  /** A task-runner hook failed. */
  CLIENT_HOOK_FAILED: e(500, '{reason}'),
  /** A task that cannot run as configured. */
  CLIENT_BAD_TASK: e(500, '{reason}'),
  /** A `host_volume` of the client's configuration it cannot offer (missing path). */
  CLIENT_HOST_VOLUME_INVALID: e(500, '{reason}'),
  /** A client option (`client { options { … } }`) with a value the client cannot use. */
  CLIENT_OPTION_INVALID: e(500, '{reason}'),
  /** The task's driver is not available on this client. */
  CLIENT_NO_DRIVER: e(500, '{reason}'),
  /** The client's state database failed. */
  CLIENT_STATE_DB: e(500, '{reason}'),
  /** No server answered the client. */
  CLIENT_SERVER_UNREACHABLE: e(503, '{reason}', true),
  /** A server refused the client's call. */
  CLIENT_SERVER_REJECTED: e(500, '{reason}', true),
  /** The client has no server addresses to try. */
  CLIENT_NO_SERVERS: e(500, 'no servers configured'),
  /** The servers do not know this node. */
  CLIENT_NODE_UNKNOWN: e(500, '{reason}', true),
  /** An allocation's group network (namespace, CNI plugins) could not be set up; a retry may succeed. */
  CLIENT_NETWORK_SETUP: e(500, 'network {mode} of allocation {alloc}: {reason}', true),
  /** A CNI plugin failed (its own error message when it printed one); retrying may help. */
  CLIENT_CNI_PLUGIN: e(500, 'CNI plugin "{plugin}" {command} failed: {reason}', true),
  /** iptables-restore or iptables-save failed (an allocation's port rules); retrying may help. */
  CLIENT_IPTABLES: e(500, '{tool}: {reason}', true),
  /** A group network the client cannot provide as configured (unknown mode or CNI network, bad conflist). */
  CLIENT_NETWORK_CONFIG: e(500, 'network {mode} of allocation {alloc}: {reason}'),
  /** A task's setup failed before it started. */
  TASK_SETUP_FAILED: e(500, '{reason}'),
  /** A template could not be rendered. */
  TEMPLATE_RENDER: e(500, '{reason}'),
  /** An env template's output could not be parsed. */
  TEMPLATE_ENV_PARSE: e(500, 'line {line}: {reason}'),
  /** A template or artifact path escapes the task directory. */
  TASK_PATH_ESCAPE: e(500, '{field} {path} escapes the task directory'),
  /** An artifact source that is not an allowed URL nor a path inside the allocation (a host path, file://, another scheme). */
  ARTIFACT_SOURCE_REFUSED: e(400, 'artifact source {source} refused: {reason}'),
  /** An artifact could not be downloaded (network error, bad status, too large); retrying may help. */
  ARTIFACT_DOWNLOAD_FAILED: e(500, 'artifact source {source}: {reason}', true),
  /** A dispatch_payload file escapes the task's local directory. */
  DISPATCH_PAYLOAD_PATH: e(500, 'dispatch_payload: file {file} escapes the task\'s local directory'),

  // ---- jobspec, structs, agent ----
  /** A jobspec that cannot be parsed; `reason` lists every problem. */
  JOBSPEC_INVALID: e(400, '{reason}'),
  /** An HCL2 expression in a job file that is not valid syntax. */
  HCL_SYNTAX: e(400, '{reason}'),
  /** An HCL2 expression whose evaluation failed (a wrong type, a missing key, a function's error). */
  HCL_EVAL: e(400, '{reason}'),
  /** A filesystem function (file, fileset, …) where files may not be read. */
  HCL_FILE_ACCESS: e(400, '{reason}'),
  /** An HCL2 evaluation that exceeded its budget (steps, nesting, value size, regex time). */
  HCL_LIMIT: e(400, '{reason}'),
  /** A duration string that cannot be parsed. */
  DURATION_INVALID: e(400, 'invalid duration "{value}"'),
  /** An agent flag or config file value that cannot be used. */
  AGENT_CONFIG_INVALID: e(500, '{field}: {reason}'),
  /** A role (server or client) this agent does not run. */
  AGENT_ROLE_UNAVAILABLE: e(500, '{reason}'),
} as const satisfies Record<string, ErrorSpec>;

/** The response header carrying the code of an API error, beside Nomad's plain-text message. */
export const ERROR_CODE_HEADER = 'X-Caravan-Error-Code';

/** Every error code. */
export type ErrorCode = keyof typeof ErrorCatalogue;

type Placeholders<T extends string> = T extends `${string}{${infer Name}}${infer Rest}` ? Name | Placeholders<Rest> : never;

/** The typed fields of an error with code C: one per placeholder of its template. */
export type ErrorFields<C extends ErrorCode> = { readonly [K in Placeholders<(typeof ErrorCatalogue)[C]['message']>]: string | number };

/** True when `v` is a code of the catalogue. */
export function isErrorCode(v: unknown): v is ErrorCode {
  return typeof v === 'string' && Object.prototype.hasOwnProperty.call(ErrorCatalogue, v);
}

/** The message of an error with code `code` and fields `fields`. */
export function formatErrorMessage<C extends ErrorCode>(code: C, fields: ErrorFields<C>): string {
  const values = fields as Readonly<Record<string, string | number>>;
  return ErrorCatalogue[code].message.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ''));
}
