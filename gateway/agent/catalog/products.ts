/**
 * The catalog for this system's own agents (GET /v2/products, GET /v2/products/{productId}; MCP
 * tools search_products and get_product_details): a thin edge over the gateway's catalog service
 * (gateway/catalog/service.ts), behind the agent chain's first steps with scope catalog:read:
 *
 *   onRequest     1 identity (401) → 2 scope (403) → 3 block (429) → 4 rate limit (429)
 *   preValidation the query contract, compiled from procurement.yaml's parameters (422
 *                 invalid-query; a read's refusal neither counts towards the block nor resets it,
 *                 as for listing orders)
 *   handler       the catalog service: every variant priced for the caller (a one-line quote)
 *                 and judged by its spend policy; rendered in the document's snake_case
 *   onResponse    9 audit entry
 *
 * The service is bound late (`bind`): the agent routes are registered before the quote the
 * catalog prices with (gateway/edge/index.ts); until bound, a call answers 503.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { minorUnits } from '../../../lib/graphql/decimal.ts';
import { CHECKED_SCHEMAS } from '../../../lib/json/checked-schemas.ts';
import type { Logger } from '../../../lib/logger.ts';
import { money } from '../../../lib/money.ts';
import { Problem, sendProblem } from '../../../lib/problem.ts';
import { type SearchInput, SearchInputError } from '../../../subgraphs/pricing/catalog/search/request.ts';
import { OPENAPI_FILE } from '../../../subgraphs/procurement/contract/openapi.ts';
import type { CatalogContext, CatalogService, PricedProduct, PricedVariant } from '../../catalog/service.ts';
import { violations } from '../../edge/quote/contract.ts';
import { toolOperation } from '../contract/operations.ts';
import { invalidQuery } from '../problems.ts';

export const PRODUCTS_PATH = '/v2/products';
export const PRODUCT_PATH = '/v2/products/{productId}';
/** The currency of every spend policy, and so the one an agent's prices default to. */
const DEFAULT_CURRENCY = 'USD';

/** Where the gateway's catalog service is, once it exists. */
export interface CatalogSlot {
  current(): CatalogService | undefined;
  bind(service: CatalogService): void;
}

export function catalogSlot(): CatalogSlot {
  let service: CatalogService | undefined;
  return {
    current: () => service,
    bind(s) {
      service = s;
    },
  };
}

type Json = Record<string, unknown>;

export const productNotFound = (id: string) =>
  new Problem(
    404,
    'product-not-found',
    'Product not found',
    `No product has the id ${JSON.stringify(id)}, and no variant that sku or variant_id.`,
  );

export const catalogUnavailable = () =>
  new Problem(
    503,
    'service-unavailable',
    'Service unavailable',
    'The catalog is unavailable.',
    {},
    { 'retry-after': '1' },
  );

const compiled = new Map<string, ValidateFunction>();

/**
 * The query contract of an operation: its query (and path) parameters as one closed object, as
 * the MCP tool's input schema shows them. Query strings are text: a lone repeated parameter
 * becomes an array, digits a number, `true` a boolean; anything else fails.
 */
function queryContract(path: string): ValidateFunction {
  let v = compiled.get(path);
  if (v) return v;
  const op = toolOperation(OPENAPI_FILE, path, 'GET');
  if (!op) throw new Error(`procurement.yaml has no GET ${path}`);
  v = new Ajv2020({ ...CHECKED_SCHEMAS, allErrors: true, strict: false, coerceTypes: 'array' }).compile(
    op.inputSchema,
  );
  compiled.set(path, v);
  return v;
}

/** The query object if it meets the contract; else the 422 is sent and undefined returned. */
function checkedQuery(path: string, req: FastifyRequest, reply: FastifyReply, extra: Json = {}) {
  const query: Json = { ...(req.query as Json), ...extra };
  const check = queryContract(path);
  if (check(query)) return query;
  const errors = violations(check.errors);
  req.agent.reason = `query: ${errors.map((e) => `${e.pointer} ${e.message}`).join('; ')}`;
  void sendProblem(reply, invalidQuery(errors), req.url);
  return undefined;
}

/** The domain's pointers (a SearchInput) as the query's parameters. */
const POINTERS: readonly [string, string][] = [
  ['/query', '/q'],
  ['/filters/categories', '/category'],
  ['/filters/brands', '/brand'],
  ['/filters/price/min', '/min_price'],
  ['/filters/price/max', '/max_price'],
  ['/filters/price', '/min_price'],
  ['/limit', '/limit'],
  ['/cursor', '/cursor'],
];
const queryPointer = (p: string) => {
  const hit = POINTERS.find(([from]) => p === from || p.startsWith(`${from}/`));
  return hit ? hit[1] + p.slice(hit[0].length) : p;
};

/** A decimal price filter in the currency's minor units; a refusal when it has more decimals than it. */
function minorOfFilter(text: unknown, currency: string, pointer: string): number | undefined {
  if (typeof text !== 'string') return undefined;
  const minor = money(text).times(10 ** minorUnits(currency));
  if (!minor.isInteger()) throw new SearchInputError(pointer, `has more decimals than ${currency} has`);
  return minor.toNumber();
}

/** The agent's query as the domain's search (its checks are the domain's: request.ts). */
function searchInputOf(q: Json, currency: string): SearchInput {
  const min = minorOfFilter(q.min_price, currency, '/filters/price/min');
  const max = minorOfFilter(q.max_price, currency, '/filters/price/max');
  return {
    ...(q.q !== undefined ? { query: q.q } : {}),
    filters: {
      ...(q.category !== undefined ? { categories: q.category } : {}),
      ...(q.brand !== undefined ? { brands: q.brand } : {}),
      ...(min !== undefined || max !== undefined ? { price: { currency, min, max } } : {}),
      ...(q.available !== undefined ? { available: q.available } : {}),
      // Only what the agent can be priced for: a product without a price in the currency is not shown.
      pricedIn: currency,
    },
    ...(q.limit !== undefined ? { limit: q.limit } : {}),
    ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
  };
}

const decimal2 = (v: string | number) => money(v).toFixed(2);

function priceOf(v: PricedVariant, currency: string): Json | null {
  const line = v.offer?.lines[0];
  const base = v.prices[currency];
  let amount: string;
  let source: string;
  if (v.offer && line) {
    amount = decimal2(v.offer.total);
    source = line.source;
  } else if (base !== undefined) {
    amount = decimal2(base);
    source = 'catalog';
  } else return null;
  const reference = v.listPrices?.[currency] ?? base;
  const list = reference !== undefined && money(reference).greaterThan(amount) ? decimal2(reference) : null;
  return { currency, amount, list_amount: list, source };
}

function variantJson(v: PricedVariant, currency: string): Json {
  return {
    sku: v.sku,
    variant_id: v.variantId,
    title: v.title,
    options: v.options.map((o) => ({ name: o.name, value: o.value })),
    availability: v.availability,
    purchasable: v.available,
    price: priceOf(v, currency),
    budget: v.budget
      ? {
          within_budget: v.budget.withinBudget,
          approvals_required: v.budget.approvalsRequired,
          sku_allowed: v.budget.skuAllowed,
          remaining: v.budget.remaining,
        }
      : null,
  };
}

export function productJson(p: PricedProduct, currency: string): Json {
  return {
    id: p.productId,
    title: p.title,
    description: p.description.plain,
    brand: p.brand ?? null,
    categories: [...p.categories],
    url: p.url ?? null,
    image_url: p.media.find((m) => m.type === 'image')?.url ?? p.media[0]?.url ?? null,
    options: p.options.map((o) => ({ name: o.name, values: [...o.values] })),
    variants: p.variants.map((v) => variantJson(v, currency)),
  };
}

export interface ProductRouteOptions {
  readonly catalog: CatalogSlot;
  readonly log: Logger;
  /** The pricing region when the agent names none (ACP_DEFAULT_REGION). */
  readonly defaultRegion: string;
}

function contextOf(req: FastifyRequest, q: Json, o: ProductRouteOptions): CatalogContext {
  const identity = req.agent.identity;
  return {
    currency: typeof q.currency === 'string' ? q.currency : DEFAULT_CURRENCY,
    region: typeof q.region === 'string' ? q.region : o.defaultRegion,
    ...(identity ? { agent: identity } : {}),
  };
}

/** The service, or the 503 sent when the catalog cannot answer (not bound yet, or it failed). */
function failed(req: FastifyRequest, reply: FastifyReply, o: ProductRouteOptions, err?: unknown) {
  if (err) o.log.error({ err, traceId: req.traceId }, 'catalog unavailable');
  req.agent.reason = 'catalog unavailable';
  return sendProblem(reply, catalogUnavailable(), req.url);
}

/** GET /v2/products: one page of the search, every variant priced for the caller. */
export function searchProductsHandler(o: ProductRouteOptions) {
  return async function searchProducts(req: FastifyRequest, reply: FastifyReply) {
    const q = checkedQuery(PRODUCTS_PATH, req, reply);
    if (!q) return reply;
    const service = o.catalog.current();
    if (!service) return failed(req, reply, o);
    const ctx = contextOf(req, q, o);
    let page: Awaited<ReturnType<CatalogService['search']>>;
    try {
      page = await service.search(searchInputOf(q, ctx.currency), ctx);
    } catch (err) {
      if (err instanceof SearchInputError) {
        const errors = [{ pointer: queryPointer(err.pointer), message: err.message }];
        req.agent.reason = `query: ${errors[0]?.pointer} ${err.message}`;
        return sendProblem(reply, invalidQuery(errors), req.url);
      }
      return failed(req, reply, o, err);
    }
    return reply.header('cache-control', 'no-store').send({
      products: page.products.map((p) => productJson(p, ctx.currency)),
      total: page.total,
      total_exact: page.totalCapped !== true,
      next_cursor: page.nextCursor ?? null,
      corrected_query: page.correctedQuery ?? null,
    });
  };
}

/** GET /v2/products/{productId}: the product by its id, or by a variant's sku or variant_id. */
export function readProductHandler(o: ProductRouteOptions) {
  return async function readProduct(req: FastifyRequest, reply: FastifyReply) {
    const id = (req.params as { id: string }).id;
    const q = checkedQuery(PRODUCT_PATH, req, reply, { product_id: id });
    if (!q) return reply;
    const service = o.catalog.current();
    if (!service) return failed(req, reply, o);
    const ctx = contextOf(req, q, o);
    let found: Awaited<ReturnType<CatalogService['product']>>;
    try {
      found = await service.product(id, ctx);
    } catch (err) {
      return failed(req, reply, o, err);
    }
    if (!found) {
      req.agent.reason = 'product not found';
      return sendProblem(reply, productNotFound(id), req.url);
    }
    return reply.header('cache-control', 'no-store').send({
      product: productJson(found.product, ctx.currency),
      selected_sku: found.variantSku ?? null,
    });
  };
}
