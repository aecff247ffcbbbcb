/**
 * The catalog as an ACP product feed (subgraphs/pricing/catalog/feed/): exported as
 * metadata.json and products.jsonl, every line valid against the vendored schema.feed.json and
 * imported back unchanged; and pushed to an agent platform's Feed API, here a server made from
 * the vendored openapi.feed.yaml that judges every request by its schemas.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_PGLITE } from '../../harness/services.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { systemClock } from '../../lib/clock.ts';
import { loadConfig } from '../../lib/config.ts';
import { openPglite } from '../../lib/db/pglite.ts';
import { createLogger } from '../../lib/logger.ts';
import { feedViolations } from '../../subgraphs/pricing/catalog/feed/schema.ts';
import { generateProducts } from '../../subgraphs/pricing/catalog/generate.ts';
import { createCatalogImports } from '../../subgraphs/pricing/catalog/import/service.ts';
import { migrateCatalog } from '../../subgraphs/pricing/catalog/migrations.ts';
import { createSqlCatalogProducts } from '../../subgraphs/pricing/catalog/products.ts';

const SIZE = 300;

/** An agent platform's Feed API: every request judged against openapi.feed.yaml's schemas. */
interface Platform {
  readonly url: string;
  readonly products: Map<string, Record<string, unknown>>;
  readonly violations: string[];
  readonly requests: { method: string; path: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

async function startPlatform(): Promise<Platform> {
  const products = new Map<string, Record<string, unknown>>();
  const violations: string[] = [];
  const requests: Platform['requests'] = [];
  const feeds = new Set<string>();
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers });
      const json = (status: number, value: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(value));
      };
      const parsed = JSON.parse(body || '{}') as Record<string, unknown>;
      if (req.method === 'POST' && req.url === '/feeds') {
        for (const v of feedViolations('CreateFeedRequest', parsed))
          violations.push(`createFeed ${v.path} ${v.reason}`);
        const id = `feed_${feeds.size + 1}`;
        feeds.add(id);
        return json(201, { id, target_country: parsed.target_country, updated_at: new Date().toISOString() });
      }
      const m = /^\/feeds\/([^/]+)\/products$/.exec(req.url ?? '');
      if (req.method === 'PATCH' && m) {
        if (!feeds.has(decodeURIComponent(m[1] as string)))
          return json(404, {
            type: 'invalid_request',
            code: 'feed_not_found',
            message: 'Feed not found',
            param: 'id',
          });
        for (const v of feedViolations('UpsertProductsRequest', parsed))
          violations.push(`upsert ${v.path} ${v.reason}`);
        for (const p of (parsed.products ?? []) as Record<string, unknown>[]) products.set(p.id as string, p);
        return json(200, { id: m[1], accepted: true });
      }
      return json(404, { type: 'invalid_request', code: 'not_found', message: 'no such route' });
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    products,
    violations,
    requests,
    close: () => new Promise((ok) => server.close(() => ok())),
  };
}

const until = async (check: () => boolean, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
};

const priced = generateProducts(SIZE).filter((p) => p.variants.some((v) => v.prices.USD !== undefined));

describe('the catalog exported as an ACP product feed', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded({ CATALOG_SIZE: String(SIZE) });
  });
  afterAll(() => sys?.close());

  it('is metadata.json and products.jsonl, every line a valid Product, and imports back unchanged', async () => {
    const meta = await (
      await fetch(`${sys.url}/v1/catalog/feed/metadata.json?currency=USD&target_country=US`)
    ).json();
    expect(feedViolations('FeedMetadata', meta)).toEqual([]);
    const res = await fetch(`${sys.url}/v1/catalog/feed/products.jsonl?currency=USD`);
    expect(res.headers.get('content-type')).toMatch(/^application\/jsonl/);
    const lines = (await res.text()).split('\n').filter(Boolean);
    expect(lines).toHaveLength(priced.length);
    for (const l of lines) expect(feedViolations('Product', JSON.parse(l))).toEqual([]);

    // Imported into an empty catalog, the feed gives the same products, variants and USD prices.
    const db = await openPglite(undefined, TEST_PGLITE);
    try {
      const schema = await migrateCatalog(db);
      const imports = createCatalogImports({
        db,
        clock: systemClock,
        log: createLogger(loadConfig({ LOG_LEVEL: 'silent' }), 'test'),
        changed: async () => {},
      });
      const { id } = await imports.start({ mode: 'PARTIAL', metadata: meta });
      const appended = await imports.append(id, 1, lines);
      expect(appended).toMatchObject({ accepted: lines.length, refused: 0 });
      await imports.commit(id);
      await imports.settled();
      const products = createSqlCatalogProducts(db, { trigram: schema.trigram, secret: 'x'.repeat(32) });
      for (const p of priced.slice(0, 40)) {
        const back = (await products.product(p.productId))?.product;
        const usd = p.variants.filter((v) => v.prices.USD !== undefined);
        expect(back?.title).toBe(p.title);
        expect(back?.variants.map((v) => [v.variantId, v.prices.USD])).toEqual(
          usd.map((v) => [v.variantId, v.prices.USD]),
        );
        // The variant ids are SKUs already: they keep them.
        expect(back?.variants.map((v) => v.sku)).toEqual(usd.map((v) => v.sku));
      }
    } finally {
      await db.close();
    }
  });

  it('refuses a currency that is no code', async () => {
    const res = await fetch(`${sys.url}/v1/catalog/feed/products.jsonl?currency=dollars`);
    expect(res.status).toBe(400);
  });
});

describe('the catalog pushed to an agent platform (ACP Feed API)', () => {
  let platform: Platform;
  let sys: TestSystem;
  beforeAll(async () => {
    platform = await startPlatform();
    sys = await startEmbedded({
      CATALOG_SIZE: String(SIZE),
      ACP_FEED_API_URL: platform.url,
      ACP_FEED_API_TOKEN: 'platform-token',
    });
  });
  afterAll(async () => {
    await sys?.close();
    await platform?.close();
  });

  it('creates the feed and fills it whole, each request valid against openapi.feed.yaml', async () => {
    await until(() => platform.products.size === priced.length, 'the whole catalog');
    expect(platform.violations).toEqual([]);
    const create = platform.requests.filter((r) => r.method === 'POST');
    expect(create).toHaveLength(1);
    for (const r of platform.requests) {
      expect(r.headers['api-version']).toBe('2026-04-17');
      expect(r.headers.authorization).toBe('Bearer platform-token');
      expect(r.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('upserts a product again when its base price changes', async () => {
    const p = priced[5] as (typeof priced)[number];
    const v = p.variants.find((x) => x.prices.USD !== undefined) as (typeof p.variants)[number];
    const set = await sys.gql(
      'mutation($input: SetBasePriceInput!) { setBasePrice(input: $input) { amountDecimal } }',
      {
        token: await sys.token(['pricing:admin']),
        variables: { input: { sku: v.sku, currency: 'USD', amountDecimal: '321.00' } },
      },
    );
    expect(set.errors).toBeUndefined();
    await until(() => {
      const pushed = platform.products.get(p.productId) as
        | { variants: { id: string; price: { amount: number } }[] }
        | undefined;
      return pushed?.variants.find((x) => x.id === v.variantId)?.price.amount === 32100;
    }, 'the new price on the platform');
    expect(platform.violations).toEqual([]);
  });
});
