import type { Config } from './config.ts';

/**
 * This system's origin as its callers see it: PUBLIC_BASE_URL, else http://HOST:PORT, without
 * a trailing slash. Links handed to other parties (ACP permalinks, discovery) start with it.
 * Distributed, set PUBLIC_BASE_URL on every process that makes such links: a subgraph's own
 * HOST:PORT is not where callers reach the gateway.
 */
export const publicOrigin = (config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): string =>
  (config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/+$/, '');

/** ACP's `api_base_url`: ACP_API_BASE_URL, else the public origin + `/acp`; no trailing slash. */
export const acpApiBaseUrl = (
  config: Pick<Config, 'ACP_API_BASE_URL' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>,
): string => (config.ACP_API_BASE_URL ?? `${publicOrigin(config)}/acp`).replace(/\/+$/, '');

/** UCP's REST endpoint: UCP_API_BASE_URL, else the public origin + `/ucp`; no trailing slash. */
export const ucpApiBaseUrl = (
  config: Pick<Config, 'UCP_API_BASE_URL' | 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>,
): string => (config.UCP_API_BASE_URL ?? `${publicOrigin(config)}/ucp`).replace(/\/+$/, '');

/**
 * Where an ACP platform reads a checkout order back: its checkout session (`GET
 * {api_base_url}/checkout_sessions/{id}`, which carries the order), readable with the
 * platform's own key. The agent order API's `GET …/orders/{id}` takes SPIFFE identities only.
 */
export const checkoutPermalink = (apiBaseUrl: string, sessionId: string): string =>
  `${apiBaseUrl}/checkout_sessions/${encodeURIComponent(sessionId)}`;
