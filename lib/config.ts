import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { bool, hostName, list, port, positiveInt, url } from './config/kinds.ts';
import { loadFields } from './config/load.ts';
import { protocolFields } from './config/protocols.ts';

/**
 * The one configuration object, read from the environment at start-up. A bad value stops the
 * process with a message naming the variable (see loadConfig). Add new settings here, with a
 * default that works on a fresh machine, and document them in the README's table.
 */
/** The development default of earlier releases: public, so refused wherever it is set. */
const FORMER_DEV_GATEWAY_SECRET = 'dev-only-gateway-secret-change-me';
const fields = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  HOST: z.string().min(1).default('127.0.0.1'),
  PORT: port.default(8080),
  /** A client must send its whole request line and headers within this (slow-header clients are cut off: 408). */
  HTTP_HEADERS_TIMEOUT_MS: positiveInt.default(10_000),
  /** A client must send its whole request, body included, within this (slow-body clients are cut off: 408). */
  HTTP_REQUEST_TIMEOUT_MS: positiveInt.default(30_000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Where the embedded topology keeps its SQL store and development keys. */
  DATA_DIR: z.string().min(1).default('./data'),
  /** `disk` keeps the embedded SQL store under DATA_DIR; `memory` forgets it on exit (tests). */
  EMBEDDED_DB: z.enum(['disk', 'memory']).default('disk'),
  /**
   * `on` (the default): the embedded store on disk syncs its WAL before it answers a commit, so
   * every acknowledged write survives a power loss; on its own thread it syncs the commits that
   * came together once, before any of their answers leave (group commit,
   * lib/db/pglite-worker.ts). `commit`: each commit syncs the WAL itself before it returns
   * (PostgreSQL's `synchronous_commit = on`; what `on` did before the group commit). `off` is
   * PostgreSQL's `fsync = off`: faster, and after a power loss or an operating-system crash the
   * last writes may be gone and the data directory may be corrupt (restore the backup). Logged
   * at start when off (lib/db/pglite-sync.ts, docs/deployment.md "What survives what").
   */
  EMBEDDED_DB_FSYNC: z.enum(['on', 'commit', 'off']).default('on'),
  /**
   * `worker` (the default) runs the embedded SQL store on its own thread, so its statements and
   * the garbage PGlite makes (its own heap) do not stall the requests (lib/db/pglite-worker.ts);
   * `main` runs it on the request thread, where orders alone are a little faster and quotes
   * beside them wait longer (docs/performance.md, "Fifth pass").
   */
  EMBEDDED_DB_THREAD: z.enum(['worker', 'main']).default('worker'),
  /**
   * The niceness of the embedded store's own thread (EMBEDDED_DB_THREAD=worker, Linux): 0 (the
   * default) is the process's, 19 the lowest. Niced, the store yields a contended core to the
   * requests; measured, it did not win alternated rounds by more than they differed, so it is
   * a knob, not the default (docs/performance.md, "Fifth pass").
   */
  EMBEDDED_DB_NICE: z.coerce.number().int().min(0).max(19).default(0),
  /**
   * A file holding a newly initialised embedded data directory (a tarball, made on first use):
   * a new store, in memory or in a new DATA_DIR, is loaded from it instead of running Postgres'
   * initdb again, which takes seconds of CPU each time. For tests and benches that open many
   * fresh stores (lib/db/pglite.ts); unset, each new store runs initdb.
   */
  EMBEDDED_DB_TEMPLATE: z.string().min(1).optional(),
  ...loadFields,
  /** PostgreSQL for orders, audit, catalog and promotions; unset means the embedded store. */
  DATABASE_URL: url.optional(),
  /**
   * Redis for cache, buckets, blocks, idempotency and events; unset means in-process state.
   * A `redis+cluster://` (or `rediss+cluster://`) URL, REDIS_CLUSTER=true or REDIS_CLUSTER_NODES
   * selects Redis Cluster (see lib/redis.ts).
   */
  REDIS_URL: url.optional(),
  REDIS_CLUSTER: bool.default('false'),
  /** Redis Cluster seed nodes, `host:port,host:port`; implies REDIS_CLUSTER. */
  REDIS_CLUSTER_NODES: list
    .pipe(z.array(z.string().regex(/^[^\s:/]+:\d{1,5}$/, 'expected host:port,host:port')).min(1))
    .optional(),
  /** A Redis command not answered in this time fails (limits and blocks then refuse: fail closed). */
  REDIS_COMMAND_TIMEOUT_MS: positiveInt.default(500),
  /** On SIGTERM, how long /readyz answers 503 while the process still serves, before it stops accepting. */
  SHUTDOWN_DELAY_MS: z.coerce.number().int().min(0).default(0),
  /** On SIGTERM, the time allowed to drain and flush before the process exits 1 regardless. */
  SHUTDOWN_TIMEOUT_MS: positiveInt.default(20_000),
  /** Braces would make the prefix a Redis Cluster hash tag and put every key in one slot. */
  REDIS_KEY_PREFIX: z
    .string()
    .regex(/^[^{}]*$/, 'must not contain { or } (a Redis Cluster hash tag)')
    .default('ac:'),

  // Gateway: callers' bearer JWTs (role-restricted GraphQL operations).
  AUTH_ISSUER: z.string().min(1).default('https://auth.agent-commerce.local'),
  AUTH_AUDIENCE: z.string().min(1).default('agent-commerce'),
  /** Remote JWKS of the identity provider; unset means the development key under DATA_DIR. */
  AUTH_JWKS_URL: url.optional(),
  /**
   * Subgraphs and the internal order endpoint accept only calls that carry this gateway secret.
   * Unset: a random one is made at each start (the embedded process shares it in memory), so no
   * constant secret opens anything; every process of the distributed topology must be given the
   * same one (they refuse to start without it: requireSharedSecret).
   */
  GATEWAY_SHARED_SECRET: z
    .string()
    .min(16)
    .refine((v) => v !== FORMER_DEV_GATEWAY_SECRET, {
      message:
        'this is the former published development default: unset it (a random one is made) or set your own',
    })
    .optional(),
  PRICING_URL: url.default('http://127.0.0.1:4001'),
  PROMOTIONS_URL: url.default('http://127.0.0.1:4002'),
  PROCUREMENT_URL: url.default('http://127.0.0.1:4003'),
  SUBGRAPH_TIMEOUT_MS: positiveInt.default(2000),
  // Shared subgraph calls in the distributed gateway (gateway/datasources/merge.ts).
  SUBGRAPH_FETCH_MERGING: z.enum(['on', 'off']).default('on'),

  // GraphQL demand control (docs/graphql-demand-control.md). The defaults let every operation
  // of schemas/operations/ through with room to spare (ci/operations.ts checks it).
  GRAPHQL_MAX_TOKENS: positiveInt.default(1000),
  GRAPHQL_MAX_DEPTH: positiveInt.default(10),
  GRAPHQL_MAX_ALIASES: z.coerce.number().int().min(0).default(15),
  GRAPHQL_MAX_ROOT_FIELDS: positiveInt.default(10),
  GRAPHQL_MAX_DIRECTIVES: z.coerce.number().int().min(0).default(20),
  GRAPHQL_MAX_COST: positiveInt.default(2000),
  /** Request body limit of /graphql (413 above). */
  GRAPHQL_BODY_LIMIT_BYTES: positiveInt.default(262_144),
  /** Only the operations of the manifest run (production switches it on). */
  GRAPHQL_SAFELIST: bool.default('false'),
  /** The persisted-operation manifest; unset means the committed schemas/operations/manifest.json. */
  GRAPHQL_OPERATIONS_MANIFEST: z.string().min(1).optional(),
  /** Heap bound of the APQ registrations (the manifest's operations are kept outside it). */
  GRAPHQL_APQ_CACHE_BYTES: positiveInt.default(2 * 1024 * 1024),
  /** Heap bound of the parsed-and-validated document cache. */
  GRAPHQL_DOCUMENT_CACHE_BYTES: positiveInt.default(8 * 1024 * 1024),

  // Agent purchase gateway.
  SPIFFE_TRUST_DOMAINS: list.default('example.org'),
  /** Peers whose X-Spiffe-Id header is trusted when TLS is off (the mTLS sidecar). */
  TRUSTED_PROXIES: list.default('127.0.0.1,::1,::ffff:127.0.0.1'),
  /**
   * Host names this system answers to besides loopback names, IP literals and the hosts of
   * PUBLIC_BASE_URL, ACP_API_BASE_URL and UCP_API_BASE_URL (lib/http/served-hosts.ts): the
   * peer-trusted X-Spiffe-Id and the console's development token refuse any other Host, and
   * state-changing console calls any other Origin (DNS rebinding, docs/console.md "Hardening").
   */
  SERVED_HOSTS: list.pipe(z.array(hostName)).default(''),
  TLS_CERT_FILE: z.string().optional(),
  TLS_KEY_FILE: z.string().optional(),
  TLS_CA_FILE: z.string().optional(),
  RATE_LIMIT_CAPACITY: positiveInt.default(20),
  RATE_LIMIT_REFILL_PER_SECOND: z.coerce.number().positive().default(10),
  ORDER_BODY_LIMIT_BYTES: positiveInt.default(4096),
  /** With TLS: `required` refuses handshakes without a client certificate of TLS_CA_FILE. */
  TLS_CLIENT_CERT: z.enum(['required', 'optional']).default('required'),
  /**
   * With TLS: the lowest protocol version a handshake may agree. UCP's REST bindings say its
   * endpoints MUST be served with TLS 1.3 at least (checkout-rest.md, order-rest.md); an operator
   * who lowers this for older agents keeps UCP at 1.3 (gateway/agent/ucp/routes.ts answers a UCP
   * request on a TLS 1.2 connection 403 `tls_version_unsupported`).
   */
  TLS_MIN_VERSION: z.enum(['TLSv1.3', 'TLSv1.2']).default('TLSv1.3'),
  /**
   * JSON object: SPIFFE ID → scopes it is granted (an entry covers the IDs below it; the
   * longest match wins). Unset: `orders:create` and `spend:read` for the procurement agent in each trust domain.
   */
  AGENT_SCOPE_POLICY: z.string().optional(),
  /** `aud` required in an agent's bearer token (RFC 9068 access token), when one is sent. */
  AGENT_TOKEN_AUDIENCE: z.string().min(1).default('agent-purchase-gateway'),
  /**
   * RFC 9421 HTTP message signatures (Web Bot Auth profile) as a second agent identity source:
   * a JSON file mapping SPIFFE IDs to JWK Sets of public Ed25519 / P-256 keys (docs/signatures.md).
   * Unset: no key is registered and every signed request is refused as signed by an unknown key.
   */
  AGENT_SIGNATURE_KEYS: z.string().min(1).optional(),
  /** How far a signature's `created` may lie in the future, and `expires` in the past (clock skew). */
  AGENT_SIGNATURE_CLOCK_SKEW_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /** Longest accepted `expires` − `created`: bounds how long a nonce must be remembered. */
  AGENT_SIGNATURE_MAX_VALIDITY_SECONDS: positiveInt.max(3600).default(300),
  /** How long an Idempotency-Key's reply is kept for replay. */
  IDEMPOTENCY_TTL_SECONDS: positiveInt.default(86_400),
  /** How long an unfinished call holds its Idempotency-Key (a replica killed mid-call frees it after this). */
  IDEMPOTENCY_IN_FLIGHT_MS: positiveInt.default(30_000),
  /** `sql` stores orders and the audit log durably; `memory` is for benchmarks only. */
  ORDER_STORE: z.enum(['sql', 'memory']).default('sql'),
  /**
   * Orders from an identity no spend policy covers: `allow` (no spend limit; the spec's order
   * needs none) or `deny` (403 spend-policy-required: every agent needs a mandate).
   */
  SPEND_POLICY_DEFAULT: z.enum(['allow', 'deny']).default('allow'),
  /** Distributed gateway → procurement order domain (HTTP) time limit. */
  ORDER_DOMAIN_TIMEOUT_MS: positiveInt.default(2000),
  /** How long after processed_at an agent may cancel its order (docs/procurement.md, "Order lifecycle"); 0: never. */
  ORDER_CANCEL_WINDOW_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** How long an order PENDING_APPROVAL waits for an operator's decision before it EXPIRES (issue 22). */
  ORDER_APPROVAL_TTL_SECONDS: positiveInt.default(86_400),
  /** The expiry sweep's mean interval (each pass waits 50–150 % of it, so replicas do not sweep in step). */
  ORDER_APPROVAL_SWEEP_MS: positiveInt.default(30_000),
  /** Outbox rows the relay publishes per transaction. */
  OUTBOX_BATCH_SIZE: z.coerce.number().int().min(1).max(1000).default(100),
  /** The outbox relay's slow poll (it is also woken after each commit). */
  OUTBOX_POLL_MS: positiveInt.default(5000),
  /** The audit chain's HMAC link keys (JSON key ring, outside the database); unset: DATA_DIR/keys/audit-hmac.json. */
  AUDIT_KEYS_FILE: z.string().min(1).optional(),
  /** ES256 keys that sign audit checkpoints (quote-token key ring format); unset: DATA_DIR/keys/audit-checkpoint.json. */
  AUDIT_CHECKPOINT_KEYS_FILE: z.string().min(1).optional(),
  /** Directory of signed audit checkpoints (outside the audit table); unset: DATA_DIR/audit-checkpoints. */
  AUDIT_CHECKPOINT_DIR: z.string().min(1).optional(),
  /** How often the chain head is sealed into a new checkpoint when it moved. */
  AUDIT_CHECKPOINT_EVERY_MS: positiveInt.default(10_000),
  /** The least time between two rewrites of the signed head (head.jws); 0: after every batch. */
  AUDIT_HEAD_EVERY_MS: z.coerce.number().int().min(0).max(60_000).default(100),

  // Webhooks (docs/webhooks.md).
  /** Attempts per delivery (the first included) before it is marked failed. */
  WEBHOOK_MAX_ATTEMPTS: positiveInt.default(8),
  /** Backoff ceiling of the first retry; it doubles per attempt (full jitter: the wait is random below it). */
  WEBHOOK_RETRY_BASE_MS: positiveInt.default(15 * 60_000),
  /** The backoff ceiling never grows past this. */
  WEBHOOK_RETRY_MAX_DELAY_MS: positiveInt.default(8 * 3_600_000),
  /** One delivery attempt (connect, send, answer) is given up after this. */
  WEBHOOK_TIMEOUT_MS: positiveInt.default(10_000),
  /** Deliveries one worker claims and sends at once. */
  WEBHOOK_BATCH_SIZE: z.coerce.number().int().min(1).max(500).default(20),
  /** Longest sleep of an idle worker (it also wakes for each new delivery and at the next due retry). */
  WEBHOOK_POLL_INTERVAL_MS: positiveInt.default(5_000),
  /** Registered endpoints at most (active and disabled). */
  WEBHOOK_MAX_ENDPOINTS: positiveInt.default(100),
  /** Delivered and failed deliveries are deleted this many days after they were created. */
  WEBHOOK_RETENTION_DAYS: positiveInt.default(30),
  /** Allow endpoints on loopback, private, link-local addresses (development, tests); off: refused. */
  WEBHOOK_ALLOW_PRIVATE_URLS: bool.default('false'),
  /**
   * ES256 keys that sign UCP order webhooks (RFC 9421; quote-token key ring format), published in
   * the business profile's signing_keys; unset: DATA_DIR/keys/ucp-signing.json. Replicas share one file.
   */
  UCP_SIGNING_KEYS_FILE: z.string().min(1).optional(),
  // Operator console (docs/console.md).
  /** The built console (index.html and assets/); unset: dist/console of this installation. Served at /console when present. */
  CONSOLE_DIR: z.string().min(1).optional(),
  /** The console's GraphQL explorer page; unset: on, except with NODE_ENV=production. */
  CONSOLE_GRAPHQL_EXPLORER: bool.optional(),

  ...protocolFields,
  // Promotions.
  /** Where redemption limits are consumed: the SQL store (durable, default) or Redis (needs REDIS_URL). */
  PROMOTION_REDEMPTION_STORE: z.enum(['sql', 'redis']).default('sql'),

  // Pricing.
  CATALOG_SIZE: positiveInt.default(10_000),
  /** A catalog of at most this many products is searched exactly (search/degrade.ts); past it, broad searches are capped and degraded. */
  CATALOG_EXACT_SEARCH_UP_TO: z.coerce.number().int().min(0).default(50_000),
  /**
   * A remembered search's ranked matches are read again (beside a search) once this old, in case
   * a CatalogChanged message was lost (search/remembered.ts).
   */
  CATALOG_REMEMBER_MS: z.coerce.number().int().min(1000).max(3_600_000).default(30_000),
  /** Fresh prices kept in process memory: the embedded cache's bound, and (with Redis) the near cache's; 0 turns the near cache off. */
  PRICE_CACHE_MAX_ENTRIES: z.coerce.number().int().min(0).default(20_000),

  // Edge and quote tokens.
  QUOTE_TOKEN_ISSUER: z.string().min(1).default('https://edge.agent-commerce.local'),
  QUOTE_TOKEN_AUDIENCE: z.string().min(1).default('payment'),
  PRICING_TIMEOUT_MS: positiveInt.default(250),
  PROMOTIONS_TIMEOUT_MS: positiveInt.default(250),
  /** Quote-token signing keys (JSON key ring); unset means DATA_DIR/keys/quote-signing.json. Replicas share one file. */
  QUOTE_TOKEN_KEYS_FILE: z.string().min(1).optional(),
  /** Edge reads of the distributed price cache give up after this long (then pricing, then fallbacks). */
  QUOTE_CACHE_TIMEOUT_MS: positiveInt.default(50),
  /** Consecutive failures of a dependency (pricing, promotions, cache) that open its circuit breaker. */
  QUOTE_BREAKER_FAILURES: positiveInt.default(5),
  /** How long an open breaker waits before letting one trial call through. */
  QUOTE_BREAKER_HALF_OPEN_MS: positiveInt.default(5000),
});

/** Every variable loadConfig reads (docs tests check that documented settings exist). */
export const CONFIG_VARIABLES: readonly string[] = Object.keys(fields.shape);

/**
 * Development conveniences that must not reach production: a gateway secret nobody chose (each
 * replica would make its own) and the development caller key under DATA_DIR (tokens would be
 * minted locally, not by an IdP).
 */
const schema = fields.superRefine((c, ctx) => {
  if (c.NODE_ENV !== 'production') return;
  if (c.GATEWAY_SHARED_SECRET === undefined || c.GATEWAY_SHARED_SECRET.length < 32) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['GATEWAY_SHARED_SECRET'],
      message: 'in production set a secret of at least 32 characters',
    });
  }
  if (!c.AUTH_JWKS_URL) {
    ctx.addIssue({
      code: z.ZodIssueCode.custom,
      path: ['AUTH_JWKS_URL'],
      message: "in production callers' tokens are verified against your identity provider's JWKS",
    });
  }
});

/**
 * Redis Cluster is selected by any of its three spellings; REDIS_URL stays the one switch the
 * rest of the code reads ("is Redis configured"), so a list of nodes alone sets it.
 */
const resolved = schema.transform((c) => {
  const first = c.REDIS_CLUSTER_NODES?.[0];
  const url = c.REDIS_URL ?? (first ? `redis+cluster://${first}` : undefined);
  const cluster =
    c.REDIS_CLUSTER || c.REDIS_CLUSTER_NODES !== undefined || /^rediss?\+cluster:/.test(url ?? '');
  // No secret configured: one nobody knows, made now, for this process alone (derived, not a
  // variable: `gatewaySecretGenerated` tells the distributed entry points to refuse it).
  const secret = c.GATEWAY_SHARED_SECRET ?? randomBytes(32).toString('base64url');
  return {
    ...c,
    REDIS_URL: url,
    REDIS_CLUSTER: cluster,
    GATEWAY_SHARED_SECRET: secret,
    gatewaySecretGenerated: c.GATEWAY_SHARED_SECRET === undefined,
  };
});

export type Config = z.infer<typeof resolved>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = resolved.safeParse(present);
  if (parsed.success) return parsed.data;
  const lines = parsed.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`);
  throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`);
}

/**
 * A process of the distributed topology (a subgraph, a gateway-only process) talks to the others
 * with the gateway secret, so they must all be given the same one: a secret made at start would
 * be this process's alone, and every call between them would be refused. Stops such a process
 * with a message naming the variable instead.
 */
export function requireSharedSecret(config: Config, role: string): void {
  if (config.gatewaySecretGenerated)
    throw new ConfigError(
      `Invalid configuration:\n  GATEWAY_SHARED_SECRET: the distributed topology's processes must share one secret; set the same value on every process (${role} included), e.g. $(openssl rand -hex 24)`,
    );
}

/** Which state adapters a process uses: in memory (embedded) or shared (Redis/Postgres). */
export const usesRedis = (c: Config): boolean => c.REDIS_URL !== undefined;
