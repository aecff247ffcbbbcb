import { z } from 'zod';
import { bool, list, positiveInt, url } from './kinds.ts';

/**
 * The settings of the agent commerce protocols this merchant speaks, ACP and UCP, and of its
 * catalog's feed (lib/config.ts spreads them into the one configuration object).
 */
export const protocolFields = {
  // Agentic Commerce Protocol merchant (docs/acp.md).
  /** The ACP API's base URL as agents see it; its path is where the routes are served. Unset: PUBLIC_BASE_URL + /acp. */
  ACP_API_BASE_URL: url.optional(),
  /** This system's origin as callers see it (permalinks, discovery); unset: http://HOST:PORT. */
  PUBLIC_BASE_URL: url.optional(),
  /** How long an open checkout session lives before it expires. */
  ACP_SESSION_TTL_SECONDS: positiveInt.default(3600),
  /** How long a cart (UCP and ACP, docs/carts.md) lives after its last change before it is not found. */
  CART_TTL_SECONDS: positiveInt.default(86_400),
  /** The pricing region of a session whose fulfilment address names no country. */
  ACP_DEFAULT_REGION: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/, 'a region as the cart quote takes it')
    .default('US'),
  /** Currencies checkout sessions may use (lower case, ISO 4217); orders and spend policies are in USD. */
  ACP_CURRENCIES: list.pipe(z.array(z.enum(['usd'])).min(1)).default('usd'),
  /** Policy links shown on every session: `terms_of_use=https://…,return_policy=https://…`. */
  ACP_LINKS: list
    .pipe(
      z.array(
        z
          .string()
          .regex(
            /^(terms_of_use|privacy_policy|return_policy|shipping_policy|contact_us|about_us|faq|support)=https?:\/\/\S+$/,
            'type=url with an ACP link type',
          ),
      ),
    )
    .default(''),
  /** Largest ACP request body. */
  ACP_BODY_LIMIT_BYTES: positiveInt.default(65_536),

  // Universal Commerce Protocol business (docs/ucp.md).
  /** The UCP REST endpoint as platforms see it; its path is where the routes are served. Unset: PUBLIC_BASE_URL + /ucp. */
  UCP_API_BASE_URL: url.optional(),
  /**
   * The merchant's own reverse-DNS namespace: the buying-on-account payment handler is
   * `<namespace>.purchase_order` (UCP names a merchant-defined handler under the merchant's domain).
   */
  UCP_MERCHANT_NAMESPACE: z
    .string()
    .regex(/^[a-z][a-z0-9]*(?:\.[a-z][a-z0-9_]*)+$/, 'a reverse-DNS name such as com.example')
    .default('com.example'),
  /** How long a fetched platform profile is kept (UCP asks for at least 60 s). */
  UCP_PROFILE_CACHE_SECONDS: z.coerce.number().int().min(60).default(300),
  /** Platform profiles kept at most (an LRU: a fixed discovery footprint, overview.md "Fetching"). */
  UCP_PROFILE_CACHE_ENTRIES: positiveInt.default(1000),
  /** Connect and response timeout of a platform profile fetch. */
  UCP_PROFILE_TIMEOUT_MS: positiveInt.default(5000),
  /** Development and tests only: platform profiles over http, on any port, and on loopback or private addresses. */
  UCP_PROFILE_ALLOW_INSECURE: bool.default('false'),
  /** Ports a platform profile URL may name (https; none named is 443). */
  UCP_PROFILE_PORTS: list
    .pipe(z.array(z.coerce.number().int().min(1).max(65535)).min(1, 'at least one port'))
    .default('443'),
  /** How long a failed profile fetch is remembered: that URL is not fetched again meanwhile (0: not kept). */
  UCP_PROFILE_FAILURE_CACHE_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
  /**
   * Profile fetches a minute per source (client IPv4 address, IPv6 /64) for requests not yet
   * authenticated (signed calls, whose key is in the profile); beyond it 429 (docs/ucp.md).
   */
  UCP_PROFILE_FETCH_BUDGET_PER_SOURCE: positiveInt.default(10),
  /** The same budget for the whole process, every source together. */
  UCP_PROFILE_FETCH_BUDGET_GLOBAL: positiveInt.default(60),
  /** Such fetches in flight at once in the process (each may hold a socket for UCP_PROFILE_TIMEOUT_MS). */
  UCP_PROFILE_FETCH_CONCURRENCY: positiveInt.default(4),

  // The catalog as an ACP product feed, pushed to an agent platform's Feed API (docs/catalog.md).
  /** The platform's Feed API base URL (its POST /feeds and PATCH /feeds/{id}/products); unset: nothing is pushed. */
  ACP_FEED_API_URL: url.optional(),
  /** The bearer token the platform gave for its Feed API, when it asks for one. */
  ACP_FEED_API_TOKEN: z.string().min(1).optional(),
  /** The feed's market (ISO 3166-1 alpha-2): the target_country of the feed created. */
  ACP_FEED_TARGET_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 country code such as US')
    .default('US'),
  /** The currency of the prices pushed (a feed variant has one price). */
  ACP_FEED_CURRENCY: z
    .string()
    .regex(/^[A-Z]{3}$/, 'an ISO 4217 code such as USD')
    .default('USD'),
} as const;
