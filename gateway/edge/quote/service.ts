import { Problem } from '../../../lib/problem.ts';
import { type CartInput, cartHash, type QuoteTokens, uniformCart } from '../../../lib/quote-token/index.ts';
import {
  assembleQuote,
  basketOf,
  type PricedLine,
  type QuoteBody,
} from '../../../subgraphs/promotions/quote/assemble.ts';
import type { Violation } from './contract.ts';
import type { CatalogEntry, LivePrice, Price, PriceContext, PriceKey, QuotePorts } from './ports.ts';
import { type Guard, orElse } from './resilience.ts';
import { type SourcedPrice, selectPrice, usable } from './select.ts';

/**
 * The segment priced when the cart names none. Pricing's cache key needs a value, and one that
 * is not `VIP` gets no segment modifier; it must be what the GraphQL cart quote uses too, so
 * both share cache entries.
 */
export const DEFAULT_SEGMENT = 'STANDARD';

export interface CartQuote extends QuoteBody {
  quoteToken: string;
  expiresAt: string;
}

/** The catalog's guard sits under the edge's catalog memo (index.ts): a memo hit needs none. */
export interface QuoteGuards {
  cache: Guard;
  pricing: Guard;
  promotions: Guard;
}

export interface QuoteServiceDeps {
  ports: QuotePorts;
  guards: QuoteGuards;
  tokens: Pick<QuoteTokens, 'issue'>;
  /** Called once per quoted line with its price source (metrics). */
  onLine?: (source: SourcedPrice['source']) => void;
}

export interface QuoteService {
  /** Throws Problem: 422 for SKUs the catalog does not know or price, 503 when the catalog is unreachable. */
  quote(cart: CartInput): Promise<CartQuote>;
  /**
   * The quote and the units in stock each line was priced with (the catalog entry's
   * `inventoryLevel`), for the checkout sessions; GET /cart/quote does not show stock.
   */
  stockedQuote(cart: CartInput): Promise<CartQuote & { inventoryLevels: number[] }>;
  /** Units in stock of each SKU now (the catalog through the edge's memo); undefined when unknown. */
  inventoryLevels(skus: readonly string[], currency: string): Promise<(number | undefined)[]>;
  /** The pricing half alone (the GraphQL quote's fallback when pricing is down); same errors. */
  priceCart(cart: CartInput): Promise<PricedLine[]>;
  /** Whether pricing's breaker is open: calls to it fail at once. */
  pricingUnavailable(): boolean;
  /**
   * What one unit of each SKU costs the caller: for each, the quote of a one-line cart in the
   * context (pricing for all of them in one batch, then promotions for each cart alone, as the
   * quote would evaluate it), without a token. Undefined for a SKU the catalog does not know or
   * price in the currency. The catalog's search and lookups show these.
   */
  offers(skus: readonly string[], context: Omit<CartInput, 'lines'>): Promise<(QuoteBody | undefined)[]>;
}

/** A priced line with the catalog entry it was priced from (its stock included). */
type StockedLine = PricedLine & { entry: CatalogEntry };

const unprocessable = (errors: Violation[]) =>
  new Problem(422, 'unpriceable-cart', 'Cart cannot be priced', errors.map((e) => e.message).join('; '), {
    errors,
  });

/**
 * GET /cart/quote's flow (spec "4. Edge composition"): catalog, then the cached prices in one
 * round trip, pricing only for the misses, the last-known and static prices for what pricing
 * could not answer, then promotions, then the signed token. Every dependency sits behind its own
 * timeout and breaker, and every failure has a fallback: only a catalog that cannot be read
 * (no static price exists) makes the reply a 503.
 */
export function createQuoteService(deps: QuoteServiceDeps): QuoteService {
  const { ports, guards } = deps;

  /** Step 1: every product and its static price, or 422/503 (`tolerant`: undefined for an unknown SKU). */
  async function catalogOf(cart: CartInput, tolerant: true): Promise<(CatalogEntry | undefined)[]>;
  async function catalogOf(cart: CartInput, tolerant?: false): Promise<CatalogEntry[]>;
  async function catalogOf(cart: CartInput, tolerant = false): Promise<(CatalogEntry | undefined)[]> {
    const skus = cart.lines.map((l) => l.sku);
    let entries: (CatalogEntry | undefined)[];
    try {
      entries = await ports.catalog.lookup(skus, cart.currency);
    } catch {
      throw new Problem(
        503,
        'catalog-unavailable',
        'Catalog unavailable',
        'no price can be given now',
        {},
        {
          'retry-after': '1',
        },
      );
    }
    if (tolerant) return entries;
    const unknown = entries.flatMap((e, i) =>
      e ? [] : [{ pointer: `/line/${i}`, message: `${skus[i]} is not in the catalog` }],
    );
    if (unknown.length > 0) throw unprocessable(unknown);
    return entries as CatalogEntry[];
  }

  /** Step 3: pricing for the lines the cache missed, in one call; by line index. */
  async function livePrices(
    cart: CartInput,
    keys: readonly PriceKey[],
    entries: readonly CatalogEntry[],
    misses: readonly number[],
  ): Promise<(LivePrice | undefined)[]> {
    const live: (LivePrice | undefined)[] = [];
    if (misses.length === 0) return live;
    // Field by field, not `{ ...key, currency, … }`: a clone that is then extended gets a hidden
    // class of its own in V8, one per object (docs/performance.md, "Fifth pass").
    const contexts: PriceContext[] = misses.map((i) => {
      const key = keys[i] as PriceKey;
      return {
        sku: key.sku,
        region: key.region,
        customerSegment: key.customerSegment,
        currency: cart.currency,
        inventoryLevel: (entries[i] as CatalogEntry).inventoryLevel,
      };
    });
    const answers = await orElse(
      guards.pricing,
      (deadline) => ports.pricing.calculate(contexts, deadline),
      [],
    );
    misses.forEach((i, j) => {
      live[i] = answers[j];
    });
    return live;
  }

  /** Step 4: last-known prices for the lines pricing did not answer; by line index. */
  async function lastKnownPrices(keys: readonly PriceKey[], lines: readonly number[]) {
    const lastKnown: (Price | undefined)[] = [];
    if (lines.length === 0) return lastKnown;
    const wanted = lines.map((i) => keys[i] as PriceKey);
    const found = await orElse(
      guards.cache,
      () => ports.cache.lastKnown(wanted),
      [] as (Price | undefined)[],
    );
    lines.forEach((i, j) => {
      lastKnown[i] = found[j];
    });
    return lastKnown;
  }

  async function priceCart(cart: CartInput): Promise<StockedLine[]> {
    const { lines, unpriced } = await priceLines(cart, await catalogOf(cart));
    if (unpriced.length > 0) throw unprocessable(unpriced);
    return lines.filter((l) => l !== undefined);
  }

  /** Steps 2–5 for the lines with a catalog entry: by line index, undefined where no price is. */
  async function priceLines(
    cart: CartInput,
    known: readonly (CatalogEntry | undefined)[],
  ): Promise<{ lines: (StockedLine | undefined)[]; unpriced: Violation[] }> {
    const at = known.flatMap((e, i) => (e ? [i] : []));
    const entries = at.map((i) => known[i] as CatalogEntry);
    const segment = cart.customerSegment ?? DEFAULT_SEGMENT;
    const keys = entries.map((e) => ({ sku: e.sku, region: cart.region, customerSegment: segment }));

    // Step 2: the cached prices, one round trip (in process, pricing reads them itself in step 3).
    const readFresh = ports.cache.fresh?.bind(ports.cache);
    const fresh: (Price | undefined)[] = readFresh
      ? await orElse(guards.cache, () => readFresh(keys), [])
      : [];
    const misses = keys.flatMap((_, i) => (usable(fresh[i], cart.currency) ? [] : [i]));
    const live = await livePrices(cart, keys, entries, misses);
    const unanswered = misses.filter((i) => {
      const a = live[i];
      return !(a && 'price' in a && usable(a.price, cart.currency));
    });
    const lastKnown = await lastKnownPrices(keys, unanswered);

    // Step 5: the best price each line has (select.ts), else the catalog has none: 422.
    const lines: (StockedLine | undefined)[] = new Array(known.length).fill(undefined);
    const unpriced: Violation[] = [];
    entries.forEach((entry, i) => {
      const line = at[i] as number;
      const price = selectPrice(cart.currency, {
        ...(fresh[i] ? { fresh: fresh[i] } : {}),
        ...(live[i] ? { live: live[i] } : {}),
        ...(lastKnown[i] ? { lastKnown: lastKnown[i] } : {}),
        entry,
      });
      if (!price)
        unpriced.push({ pointer: `/line/${line}`, message: `${entry.sku} has no price in ${cart.currency}` });
      else {
        lines[line] = { entry, quantity: (cart.lines[line] as { quantity: number }).quantity, price };
        deps.onLine?.(price.source);
      }
    });
    return { lines, unpriced };
  }

  async function quoteOf(cart: CartInput): Promise<{ quote: CartQuote; lines: StockedLine[] }> {
    const lines = await priceCart(cart);
    const evaluation = await orElse(
      guards.promotions,
      (deadline) => ports.promotions.evaluate(basketOf(cart, lines), deadline),
      undefined,
    );
    const id = cartHash(cart);
    const { body, facts } = assembleQuote(cart, id, lines, evaluation);
    const { token, expiresAt } = await deps.tokens.issue(cart, facts, id);
    // The body is this quote's own object: extended in place rather than cloned and extended.
    return { quote: Object.assign(body, { quoteToken: token, expiresAt }), lines };
  }

  async function offers(skus: readonly string[], context: Omit<CartInput, 'lines'>) {
    if (skus.length === 0) return [];
    const all = uniformCart({ ...context, lines: skus.map((sku) => ({ sku, quantity: 1 })) });
    const { lines } = await priceLines(all, await catalogOf(all, true));
    return Promise.all(
      lines.map(async (line, i) => {
        if (!line) return undefined;
        const cart = uniformCart({ ...context, lines: [{ sku: skus[i] as string, quantity: 1 }] });
        const evaluation = await orElse(
          guards.promotions,
          (deadline) => ports.promotions.evaluate(basketOf(cart, [line]), deadline),
          undefined,
        );
        return assembleQuote(cart, cartHash(cart), [line], evaluation).body;
      }),
    );
  }

  // Each way in takes its cart in one hidden class (uniformCart), so the code below is compiled
  // for one class of cart whichever protocol called.
  return {
    priceCart: (cart) => priceCart(uniformCart(cart)),
    offers,
    pricingUnavailable: () => guards.pricing.isOpen(),
    quote: async (cart) => (await quoteOf(uniformCart(cart))).quote,
    async stockedQuote(cart) {
      const { quote, lines } = await quoteOf(uniformCart(cart));
      return Object.assign(quote, { inventoryLevels: lines.map((l) => l.entry.inventoryLevel) });
    },
    async inventoryLevels(skus, currency) {
      const entries = await ports.catalog.lookup(skus, currency);
      return entries.map((e) => e?.inventoryLevel);
    },
  };
}
