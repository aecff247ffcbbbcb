import type { Config } from './config.ts';

/**
 * This system's origin as its callers see it: PUBLIC_BASE_URL, else http://HOST:PORT, without
 * a trailing slash. Links handed to other parties (ACP permalinks, discovery) start with it.
 * Distributed, set PUBLIC_BASE_URL on every process that makes such links: a subgraph's own
 * HOST:PORT is not where callers reach the gateway.
 */
export const publicOrigin = (config: Pick<Config, 'PUBLIC_BASE_URL' | 'HOST' | 'PORT'>): string =>
  (config.PUBLIC_BASE_URL ?? `http://${config.HOST}:${config.PORT}`).replace(/\/+$/, '');

/** Where an order can be read back: the agent order API's `GET …/orders/{id}`. */
export const orderPermalink = (origin: string, orderId: string): string =>
  `${origin}/api/v2/procurement/orders/${encodeURIComponent(orderId)}`;
