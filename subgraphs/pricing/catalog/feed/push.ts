/**
 * The catalog pushed to an agent platform's Feed API (ACP release 2026-04-17, openapi.feed.yaml;
 * the RFC's "API-Based Incremental Upserts"): the feed is created once (`POST /feeds`, its id
 * kept in catalog_feed_targets), filled whole right after (`PATCH /feeds/{id}/products`, a
 * hundred products a request), and then each product whose price, stock or content changes (a
 * base price set, an import committed) is upserted again, gathered for half a second.
 *
 * Decisions where the Feed API is silent: requests carry `API-Version: 2026-04-17`, an
 * `Idempotency-Key` (the RFC's examples do), and `Authorization: Bearer` when a token is
 * configured; a failed request is tried three times, a second apart, then logged and counted
 * (the next change of the product tries again); a product removed from the catalog is not
 * pushed (the API has no delete; the RFC defers it), so a full file export covers removals.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../../lib/clock.ts';
import type { Db } from '../../../../lib/db/index.ts';
import type { Logger } from '../../../../lib/logger.ts';
import { feedProducts } from './export.ts';

export interface FeedPushConfig {
  readonly url: string;
  readonly token?: string;
  readonly targetCountry: string;
  readonly currency: string;
}

export interface FeedPusher {
  /** The SKUs whose products changed: their products are pushed (gathered, after a short wait). */
  changed(skus: readonly string[]): void;
  /** Resolves when nothing is waiting to be pushed or on its way (tests, shutdown). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export const FEED_API_VERSION = '2026-04-17';
const BATCH = 100;
const GATHER_MS = 500;
const ATTEMPTS = 3;

export function createFeedPusher(
  deps: {
    db: Db;
    log: Logger;
    clock: Clock;
    onOutcome?: (outcome: 'ok' | 'failed', products: number) => void;
  },
  config: FeedPushConfig,
): FeedPusher {
  const base = config.url.replace(/\/+$/, '');
  const headers = (): Record<string, string> => ({
    'content-type': 'application/json',
    'api-version': FEED_API_VERSION,
    'idempotency-key': randomUUID(),
    ...(config.token ? { authorization: `Bearer ${config.token}` } : {}),
  });
  let closed = false;

  async function send(method: 'POST' | 'PATCH', path: string, body: unknown): Promise<unknown> {
    let last: unknown;
    const h = headers();
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      try {
        const res = await fetch(`${base}${path}`, {
          method,
          headers: h,
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        if (res.ok) return text ? JSON.parse(text) : {};
        last = new Error(`${method} ${path} answered ${res.status}: ${text.slice(0, 300)}`);
        if (res.status < 500 && res.status !== 429) break;
      } catch (err) {
        last = err;
      }
      if (attempt < ATTEMPTS && !closed) await new Promise((r) => setTimeout(r, 1000));
    }
    throw last;
  }

  /** The feed's id on the platform, creating the feed (and filling it whole) the first time. */
  let feed: Promise<string> | undefined;
  async function feedId(): Promise<string> {
    const [known] = await deps.db.query<{ feed_id: string }>(
      'SELECT feed_id FROM catalog_feed_targets WHERE api_url = $1 AND currency = $2',
      [base, config.currency],
    );
    if (known) return known.feed_id;
    const created = (await send('POST', '/feeds', { target_country: config.targetCountry })) as {
      id?: unknown;
    };
    if (typeof created.id !== 'string' || created.id === '')
      throw new Error('the Feed API created a feed without an id');
    await deps.db.query(
      'INSERT INTO catalog_feed_targets (api_url, currency, feed_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
      [base, config.currency, created.id],
    );
    deps.log.info(
      { feedId: created.id, api: base },
      'catalog feed created on the platform; pushing every product',
    );
    await pushProducts(created.id, undefined);
    return created.id;
  }

  async function pushProducts(id: string, productIds: readonly string[] | undefined): Promise<void> {
    let batch: Record<string, unknown>[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const n = batch.length;
      try {
        await send('PATCH', `/feeds/${encodeURIComponent(id)}/products`, { products: batch });
        deps.onOutcome?.('ok', n);
      } catch (err) {
        deps.onOutcome?.('failed', n);
        deps.log.error({ err, products: n, feedId: id }, 'catalog feed push failed');
      }
      batch = [];
    };
    for await (const p of feedProducts(deps.db, config.currency, productIds ? { productIds } : {})) {
      batch.push(p);
      if (batch.length >= BATCH) await flush();
    }
    await flush();
  }

  const waiting = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<void> = Promise.resolve();

  const drain = () => {
    timer = undefined;
    const skus = [...waiting];
    waiting.clear();
    inFlight = inFlight.then(async () => {
      try {
        feed ??= feedId();
        const id = await feed;
        const ids = (
          await deps.db.query<{ product_id: string }>(
            'SELECT DISTINCT product_id FROM catalog_products WHERE sku = ANY($1::text[])',
            [skus],
          )
        ).map((r) => r.product_id);
        if (ids.length > 0) await pushProducts(id, ids);
      } catch (err) {
        feed = undefined;
        deps.log.error({ err }, 'catalog feed push failed');
      }
    });
  };

  // The feed is made (and filled) at start, before any change asks for it.
  inFlight = inFlight.then(async () => {
    try {
      feed = feedId();
      await feed;
    } catch (err) {
      feed = undefined;
      deps.log.error({ err, api: base }, 'catalog feed could not be created on the platform');
    }
  });

  return {
    changed(skus) {
      if (closed || skus.length === 0) return;
      for (const s of skus) waiting.add(s);
      timer ??= setTimeout(drain, GATHER_MS);
    },
    async settled() {
      for (;;) {
        const before = inFlight;
        if (timer) {
          clearTimeout(timer);
          drain();
        }
        await inFlight;
        if (before === inFlight && !timer && waiting.size === 0) return;
      }
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      await inFlight.catch(() => {});
    },
  };
}
