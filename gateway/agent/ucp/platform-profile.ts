import { LRUCache } from 'lru-cache';
import type { Agent } from 'undici';
import type { Clock } from '../../../lib/clock.ts';
import { guardedLookup } from '../../../lib/net/guarded-lookup.ts';
import { checkEndpointUrl } from '../../../subgraphs/procurement/webhooks/endpoint-url.ts';
import { ucpValidator } from './schema/index.ts';

/**
 * The platform's profile, named by its `UCP-Agent` header: fetched over HTTPS, never following
 * a redirect, through the webhook sender's SSRF guard (a private or loopback address is refused
 * on the address the socket connects to, so a re-pointed name cannot reach the merchant's
 * neighbours), validated against the vendored `platform_profile`, and kept in an LRU for
 * UCP_PROFILE_CACHE_SECONDS (at least the 60 s overview.md's "Fetching" asks). Concurrent
 * requests for one URL share one fetch. Failures are not kept: the next request tries again.
 *
 * The error table (overview.md, "Error Codes"): a malformed URL 400 `invalid_profile_url`, a
 * fetch that fails (timeout, DNS, non-2xx, a redirect) 424 `profile_unreachable`, content that
 * is not JSON or not a valid profile 422 `profile_malformed`.
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
  readonly status: 400 | 422 | 424;
  readonly code: 'invalid_profile_url' | 'profile_malformed' | 'profile_unreachable';
  readonly content: string;
};

export type ProfileResult = { ok: true; profile: PlatformProfile } | ({ ok: false } & ProfileFailure);

export interface ProfileFetcherOptions {
  readonly clock: Clock;
  readonly ttlMs: number;
  readonly maxEntries: number;
  readonly timeoutMs: number;
  /** Development and tests: http and loopback/private addresses are allowed. */
  readonly allowInsecure: boolean;
  /** Largest profile body read. */
  readonly maxBytes?: number;
}

export interface ProfileFetcher {
  resolve(url: string): Promise<ProfileResult>;
  /** The URL as a profile URL may be, without fetching it: undefined, or 400 `invalid_profile_url`. */
  check(url: string): ProfileFailure | undefined;
  /** Forgets a cached profile (a signature with an unknown kid may refresh it once per TTL). */
  forget(url: string): void;
  close(): Promise<void>;
}

const fail = (
  status: ProfileFailure['status'],
  code: ProfileFailure['code'],
  content: string,
): ProfileResult => ({
  ok: false,
  status,
  code,
  content,
});

/** The URL as a profile URL may be (pure): absolute https (http too when insecure is allowed). */
export function checkProfileUrl(
  raw: string,
  allowInsecure: boolean,
): { ok: true; url: string } | { ok: false; reason: string } {
  const checked = checkEndpointUrl(raw, allowInsecure);
  if (!checked.ok) return { ok: false, reason: `the profile URL ${checked.reason}` };
  if (!allowInsecure && !checked.url.startsWith('https:'))
    return { ok: false, reason: 'the profile URL must use https' };
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
  const maxBytes = o.maxBytes ?? 256 * 1024;
  const cache = new LRUCache<string, PlatformProfile>({
    max: o.maxEntries,
    ttl: o.ttlMs,
    ttlAutopurge: false,
    perf: { now: () => o.clock.now() },
  });
  const pending = new Map<string, Promise<ProfileResult>>();
  let client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;
  const connect = () => {
    client ??= import('undici').then(({ Agent, request }) => ({
      request,
      agent: new Agent({
        connections: 2,
        headersTimeout: o.timeoutMs,
        bodyTimeout: o.timeoutMs,
        connect: { timeout: o.timeoutMs, ...(o.allowInsecure ? {} : { lookup: guardedLookup }) },
      }),
    }));
    return client;
  };

  async function fetchProfile(url: string): Promise<ProfileResult> {
    const { agent, request } = await connect();
    let text: string;
    try {
      const res = await request(url, {
        method: 'GET',
        dispatcher: agent,
        signal: AbortSignal.timeout(o.timeoutMs),
        headers: { accept: 'application/json', 'user-agent': 'agent-commerce-ucp/1' },
        maxRedirections: 0,
      });
      if (res.statusCode < 200 || res.statusCode > 299) {
        await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
        const why =
          res.statusCode >= 300 && res.statusCode < 400
            ? 'redirects are not followed'
            : `it answered ${res.statusCode}`;
        return fail(424, 'profile_unreachable', `Unable to fetch the platform profile: ${why}.`);
      }
      const length = Number(res.headers['content-length']);
      if (Number.isFinite(length) && length > maxBytes) {
        await res.body.dump({ limit: 0 }).catch(() => {});
        return fail(422, 'profile_malformed', `The platform profile is larger than ${maxBytes} bytes.`);
      }
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        size += (chunk as Buffer).length;
        if (size > maxBytes) {
          res.body.destroy();
          return fail(422, 'profile_malformed', `The platform profile is larger than ${maxBytes} bytes.`);
        }
        chunks.push(chunk as Buffer);
      }
      text = Buffer.concat(chunks).toString('utf8');
    } catch (err) {
      const e = err as { name?: string; code?: string; cause?: { code?: string }; message?: string };
      const code = e.cause?.code ?? e.code;
      const why =
        e.name === 'TimeoutError' || e.name === 'AbortError'
          ? 'timed out'
          : code === 'EWEBHOOKPRIVATE'
            ? 'it resolves to a private address'
            : (code ?? e.message ?? 'failed');
      return fail(424, 'profile_unreachable', `Unable to fetch the platform profile: ${why}.`);
    }
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      return fail(422, 'profile_malformed', 'The platform profile is not JSON.');
    }
    const read = readPlatformProfile(url, doc);
    if (typeof read === 'string') return fail(422, 'profile_malformed', `${read.slice(0, 300)}.`);
    cache.set(url, read);
    return { ok: true, profile: read };
  }

  return {
    check(raw) {
      const checked = checkProfileUrl(raw, o.allowInsecure);
      return checked.ok
        ? undefined
        : { status: 400, code: 'invalid_profile_url', content: `${checked.reason}.` };
    },
    async resolve(raw) {
      const checked = checkProfileUrl(raw, o.allowInsecure);
      if (!checked.ok) return fail(400, 'invalid_profile_url', `${checked.reason}.`);
      const url = raw;
      const known = cache.get(url);
      if (known) return { ok: true, profile: known };
      let p = pending.get(url);
      if (!p) {
        p = fetchProfile(url).finally(() => pending.delete(url));
        pending.set(url, p);
      }
      return p;
    },
    forget: (url) => {
      cache.delete(url);
    },
    async close() {
      if (client) await (await client).agent.close();
    },
  };
}
