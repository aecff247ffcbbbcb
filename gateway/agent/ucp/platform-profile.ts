import { LRUCache } from 'lru-cache';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { checkEndpointUrl } from '../../../subgraphs/procurement/webhooks/endpoint-url.ts';
import type { Admission, FetchBudget } from './profile-budget.ts';
import { profileHttp } from './profile-http.ts';
import { ucpValidator } from './schema/index.ts';

/**
 * The platform's profile, named by its `UCP-Agent` header: fetched over HTTPS on an allowed port
 * (UCP_PROFILE_PORTS, 443), never following a redirect, through the SSRF guard (lib/net: a
 * private or loopback address is refused on the address the socket connects to, so a re-pointed
 * name cannot reach the merchant's neighbours), validated against the vendored
 * `platform_profile`, and kept in an LRU for UCP_PROFILE_CACHE_SECONDS (at least the 60 s
 * overview.md's "Fetching" asks). Concurrent requests for one URL share one fetch. A failure is
 * kept for UCP_PROFILE_FAILURE_CACHE_SECONDS, so a URL that fails is not fetched again at once.
 *
 * The error table (overview.md, "Error Codes"): a malformed URL 400 `invalid_profile_url`, a
 * fetch that fails (timeout, DNS, non-2xx, a redirect) 424 `profile_unreachable`, content that
 * is not JSON or not a valid profile 422 `profile_malformed`. A fetch for a caller not yet
 * authenticated (a signed call, whose key is in the profile) is held to a budget
 * (./profile-budget.ts: 429 `rate_limited` beyond it) and any failure of it is one generic 424:
 * what the far side did (a TLS error, a closed port, a status) goes to the log, not to the
 * caller, so the fetch is no scanner (docs/ucp.md, "Fetches before authentication").
 */

/** What this merchant reads of a platform profile. */
export interface PlatformProfile {
  readonly url: string;
  /** The protocol version the platform speaks (`ucp.version`). */
  readonly version: string;
  /** Capability name → the versions the platform lists for it. */
  readonly capabilities: ReadonlyMap<string, readonly string[]>;
  /** `dev.ucp.shopping.order[…].config.webhook_url`: where order events go. */
  readonly orderWebhookUrl?: string;
  /** Its public keys (JWK), for RFC 9421 request signatures. */
  readonly signingKeys: readonly Record<string, unknown>[];
}

export type ProfileFailure = {
  readonly status: 400 | 422 | 424 | 429;
  readonly code: 'invalid_profile_url' | 'profile_malformed' | 'profile_unreachable' | 'rate_limited';
  readonly content: string;
  /** 429 only: when the budget has room again. */
  readonly retryAfterS?: number;
};

export type ProfileResult = { ok: true; profile: PlatformProfile } | ({ ok: false } & ProfileFailure);

export interface ProfileFetcherOptions {
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly timeoutMs: number;
  /** Development and tests: http, any port, and loopback/private addresses are allowed. */
  readonly allowInsecure: boolean;
  /** Ports a profile URL may name (its scheme's default when it names none). Default: 443. */
  readonly ports?: readonly number[];
  /** How long a failed fetch is remembered (no fetch of that URL meanwhile). Default: 30 s. */
  readonly failureTtlMs?: number;
  /** Fetches for callers not yet authenticated; absent: not limited (tests of the fetch alone). */
  readonly budget?: FetchBudget;
  /** Where a failed fetch's reason goes. */
  readonly log?: Logger;
  /** Largest profile body read. */
  readonly maxBytes?: number;
}

/** Who a fetch is for: an authenticated platform (an API key bound to the profile), or not yet. */
export type FetchFor =
  | { readonly authenticated: true }
  | { readonly authenticated: false; readonly source: string };

export interface ProfileFetcher {
  /** The profile; `forWhom` defaults to an authenticated caller. */
  resolve(url: string, forWhom?: FetchFor): Promise<ProfileResult>;
  /** The URL as a profile URL may be, without fetching it: undefined, or 400 `invalid_profile_url`. */
  check(url: string): ProfileFailure | undefined;
  /** Forgets a cached profile (a signature with an unknown kid may refresh it once per TTL). */
  forget(url: string): void;
  close(): Promise<void>;
}

/** What an unauthenticated caller is told of any failed fetch: nothing about the far side. */
export const GENERIC_UNREACHABLE =
  'Unable to fetch a valid platform profile from the URL in UCP-Agent (the business logs why).';

const failure = (
  status: ProfileFailure['status'],
  code: ProfileFailure['code'],
  content: string,
): ProfileFailure => ({ status, code, content });

/**
 * The URL as a profile URL may be (pure): absolute https on an allowed port (any http(s) URL
 * when insecure is allowed), with no credentials, fragment or non-public address literal.
 */
export function checkProfileUrl(
  raw: string,
  allowInsecure: boolean,
  ports: readonly number[] = [443],
): { ok: true; url: string } | { ok: false; reason: string } {
  const checked = checkEndpointUrl(raw, allowInsecure);
  if (!checked.ok) return { ok: false, reason: `the profile URL ${checked.reason}` };
  if (allowInsecure) return checked;
  const url = new URL(checked.url);
  if (url.protocol !== 'https:') return { ok: false, reason: 'the profile URL must use https' };
  const port = url.port === '' ? 443 : Number(url.port);
  if (!ports.includes(port))
    return {
      ok: false,
      reason: `the profile URL's port ${port} is not one this business fetches from (${ports.join(', ')})`,
    };
  return checked;
}

const validateProfile = ucpValidator('platform_profile', 'response');

/** The parts of a valid platform profile this merchant uses (pure). */
export function readPlatformProfile(url: string, doc: unknown): PlatformProfile | string {
  const violations = validateProfile(doc);
  const first = violations[0];
  if (first) return `the platform profile is not valid: ${first.param} ${first.message}`;
  const ucp = (
    doc as {
      ucp: {
        version: string;
        capabilities?: Record<string, { version: string; config?: Record<string, unknown> }[]>;
      };
    }
  ).ucp;
  const capabilities = new Map<string, string[]>();
  for (const [name, entries] of Object.entries(ucp.capabilities ?? {}))
    capabilities.set(
      name,
      entries.map((e) => e.version),
    );
  const hook = (ucp.capabilities?.['dev.ucp.shopping.order'] ?? [])
    .map((e) => e.config?.webhook_url)
    .find((u): u is string => typeof u === 'string');
  const keys = (doc as { signing_keys?: Record<string, unknown>[] }).signing_keys ?? [];
  return {
    url,
    version: ucp.version,
    capabilities,
    ...(hook ? { orderWebhookUrl: hook } : {}),
    signingKeys: keys,
  };
}

export function profileFetcher(o: ProfileFetcherOptions): ProfileFetcher {
  const ports = o.ports ?? [443];
  const http = profileHttp({
    timeoutMs: o.timeoutMs,
    allowInsecure: o.allowInsecure,
    maxBytes: o.maxBytes ?? 256 * 1024,
  });
  const perf = { now: () => o.clock.now() };
  const cache = new LRUCache<string, PlatformProfile>({ max: o.maxEntries, ttl: o.ttlMs, perf });
  const failures = new LRUCache<string, ProfileFailure>({
    max: o.maxEntries,
    ttl: Math.max(1, o.failureTtlMs ?? 30_000),
    perf,
  });
  const pending = new Map<string, Promise<ProfileResult>>();

  async function fetchProfile(url: string, forWhom: FetchFor): Promise<ProfileResult> {
    const body = await http.get(url);
    let result: ProfileResult;
    if (!body.ok)
      result =
        body.kind === 'too-large'
          ? { ok: false, ...failure(422, 'profile_malformed', `The platform profile is ${body.reason}.`) }
          : {
              ok: false,
              ...failure(424, 'profile_unreachable', `Unable to fetch the platform profile: ${body.reason}.`),
            };
    else result = readBody(url, body.text);
    if (result.ok) cache.set(url, result.profile);
    else {
      failures.set(url, result);
      const source = forWhom.authenticated ? undefined : forWhom.source;
      o.log?.warn(
        { url: url.slice(0, 300), source, reason: result.content },
        'UCP platform profile not usable',
      );
    }
    return result;
  }

  /** One fetch of `url` for `forWhom`, within the budget when the caller is not authenticated. */
  function start(url: string, forWhom: FetchFor): Promise<ProfileResult> | ProfileResult {
    let admission: Admission | undefined;
    if (!forWhom.authenticated && o.budget) {
      admission = o.budget.admit(forWhom.source);
      if (!admission.ok) {
        o.log?.debug(
          { url: url.slice(0, 300), source: forWhom.source, why: admission.why },
          'UCP profile fetch over budget',
        );
        return {
          ok: false,
          status: 429,
          code: 'rate_limited',
          content:
            'Too many platform profiles fetched for requests not yet authenticated: retry later, or authenticate with an API key.',
          retryAfterS: Math.max(1, admission.retryAfterS),
        };
      }
    }
    const done = admission?.ok ? admission.done : undefined;
    const p = fetchProfile(url, forWhom).finally(() => {
      pending.delete(url);
      done?.();
    });
    pending.set(url, p);
    return p;
  }

  const generic = (r: ProfileResult, forWhom: FetchFor): ProfileResult =>
    r.ok || forWhom.authenticated || r.status === 400 || r.status === 429
      ? r
      : { ok: false, ...failure(424, 'profile_unreachable', GENERIC_UNREACHABLE) };

  return {
    check(raw) {
      const checked = checkProfileUrl(raw, o.allowInsecure, ports);
      return checked.ok ? undefined : failure(400, 'invalid_profile_url', `${checked.reason}.`);
    },
    async resolve(raw, forWhom = { authenticated: true }) {
      const checked = checkProfileUrl(raw, o.allowInsecure, ports);
      if (!checked.ok) return { ok: false, ...failure(400, 'invalid_profile_url', `${checked.reason}.`) };
      const url = raw;
      const known = cache.get(url);
      if (known) return { ok: true, profile: known };
      const failed = failures.get(url);
      if (failed) return generic({ ok: false, ...failed }, forWhom);
      return generic(await (pending.get(url) ?? start(url, forWhom)), forWhom);
    },
    forget: (url) => {
      cache.delete(url);
    },
    close: () => http.close(),
  };
}

/** A fetched body as a profile, or why not (pure). */
function readBody(url: string, text: string): ProfileResult {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    return { ok: false, ...failure(422, 'profile_malformed', 'The platform profile is not JSON.') };
  }
  const read = readPlatformProfile(url, doc);
  if (typeof read === 'string')
    return { ok: false, ...failure(422, 'profile_malformed', `${read.slice(0, 300)}.`) };
  return { ok: true, profile: read };
}
