/**
 * The UCP catalog capabilities over REST (catalog/rest.md): POST /catalog/search, /catalog/lookup
 * and /catalog/product under the UCP endpoint, on the gateway's catalog service (every variant
 * priced for the caller). The same hooks as checkout where they apply:
 *
 *   onRequest     UCP-Agent (400) → identity, when the call carries one: API key or RFC 9421
 *                 signature (401; none is fine, the catalog is public) → rate limit (429: the
 *                 identity's bucket, else the caller's address's) → platform profile, version,
 *                 negotiation (the operation's capability)
 *   preParsing    media type, size (415, 413) → parser: strict JSON → schema of the release (400)
 *   handler       the catalog service, rendered (catalog-render.ts)
 *   onSend        problems as UCP errors → Request-Id echo
 *   onResponse    an audit entry for an identified agent's call
 *
 * Refusals of the search itself (no query and no filter, a query over 256 characters, a cursor
 * this business did not give) are 400 `invalid_request` with the JSONPath at fault. Not found is
 * a business outcome: lookup answers what it found with `not_found` info messages; product
 * answers `ucp.status: "error"` with an unrecoverable `not_found` (rest.md).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Clock } from '../../../lib/clock.ts';
import type { Logger } from '../../../lib/logger.ts';
import { sourceOf } from '../../../lib/net/address.ts';
import type { CatalogProduct } from '../../../subgraphs/pricing/catalog/model.ts';
import { type SearchInput, SearchInputError } from '../../../subgraphs/pricing/catalog/search/request.ts';
import { type Selection, selectOptions } from '../../../subgraphs/pricing/catalog/selection.ts';
import type { CatalogContext, CatalogService, PricedVariant } from '../../catalog/service.ts';
import type { LinkingParts } from '../../oauth/index.ts';
import { echoRequestId } from '../acp/version.ts';
import { auditStep } from '../audit/audit.ts';
import type { AuditLog } from '../audit/log.ts';
import type { ApiKeyVerifier } from '../identity/api-key.ts';
import { mediaTypeStep, requireJson } from '../parse/parse.ts';
import type { BucketPolicy } from '../rate-limit/bucket.ts';
import { rateLimitStep } from '../rate-limit/rate-limit.ts';
import type { BucketStore } from '../rate-limit/store.ts';
import {
  budgetMessages,
  CATALOG_LOOKUP,
  CATALOG_SEARCH,
  catalogUcp,
  renderProduct,
} from './catalog-render.ts';
import { problemAsUcpError, sendUcpError, ucpError } from './errors.ts';
import { ucpAgentStep, ucpIdentityStep, ucpProfileStep } from './identity.ts';
import type { ProfileFetcher } from './platform-profile.ts';
import { type UcpDef, ucpCatalogValidator } from './schema/index.ts';
import type { UcpSignatureVerifier } from './signature.ts';

export interface UcpCatalogDeps {
  readonly clock: Clock;
  readonly log: Logger;
  readonly keys: ApiKeyVerifier;
  readonly signatures: UcpSignatureVerifier;
  readonly profiles: ProfileFetcher;
  readonly buckets: BucketStore;
  readonly bucketPolicy: BucketPolicy;
  readonly audit: AuditLog;
  readonly catalog: CatalogService;
  readonly continueUrl: string;
  readonly defaultRegion: string;
  /** The endpoint's response signing (./response-signature.ts), last in onSend. */
  readonly signResponse?: (req: FastifyRequest, reply: FastifyReply, payload: unknown) => Promise<unknown>;
  readonly bodyLimit: number;
  readonly linking?: LinkingParts;
}

/** Identifiers a lookup takes at once (batch size: lookup.md asks for at least 10). */
export const MAX_LOOKUP_IDS = 50;
/** Variants a search result shows per product (the best matches of its filters first). */
export const SEARCH_VARIANTS = 10;

/** Currencies by country for a context that names none (the catalog prices in these). */
const CURRENCY_OF_COUNTRY: Record<string, string> = { US: 'USD', GB: 'GBP', CA: 'CAD' };
const EURO = new Set([
  'AT',
  'BE',
  'CY',
  'DE',
  'EE',
  'ES',
  'FI',
  'FR',
  'GR',
  'HR',
  'IE',
  'IT',
  'LT',
  'LU',
  'LV',
  'MT',
  'NL',
  'PT',
  'SI',
  'SK',
]);

/**
 * The quote context of a catalog call from UCP's `context` (types/context.json, hints): the
 * currency it names, else its country's (EUR for the euro area; USD otherwise), and the region
 * is the country (as a checkout's destination country is), else the default region.
 */
export function catalogContext(context: unknown, defaultRegion: string): Omit<CatalogContext, 'agent'> {
  const c = (typeof context === 'object' && context !== null ? context : {}) as Record<string, unknown>;
  const country =
    typeof c.address_country === 'string' && /^[A-Za-z]{2}$/.test(c.address_country)
      ? c.address_country.toUpperCase()
      : undefined;
  const named =
    typeof c.currency === 'string' && /^[A-Za-z]{3}$/.test(c.currency) ? c.currency.toUpperCase() : undefined;
  const currency =
    named ?? (country ? (CURRENCY_OF_COUNTRY[country] ?? (EURO.has(country) ? 'EUR' : 'USD')) : 'USD');
  return { currency, region: country ?? defaultRegion };
}

type Body = Record<string, unknown>;

/** The release's request schema of an operation (400 `invalid_request` at the first violation). */
function contract(def: UcpDef) {
  const validate = ucpCatalogValidator(def);
  return async function schema(req: FastifyRequest, reply: FastifyReply) {
    const first = validate(req.body)[0];
    if (!first) return;
    req.agent.reason = `contract: ${first.param} ${first.message}`;
    return sendUcpError(
      reply,
      ucpError(400, 'invalid_request', `${first.param} ${first.message}`, { path: first.param }),
    );
  };
}

/** A refusal of the catalog domain as UCP's 400, its JSON pointer as a JSONPath into the body. */
function refusal(err: SearchInputError, map: (pointer: string) => string) {
  const path = map(err.pointer);
  return ucpError(400, err.kind === 'too_large' ? 'request_too_large' : 'invalid_request', err.message, {
    ...(path ? { path } : {}),
  });
}

/** UCP's search request as the domain's (filters and pagination renamed; price in the presentment currency). */
function searchInputOf(body: Body, currency: string): SearchInput {
  const filters = (body.filters ?? {}) as Body;
  const price = filters.price as { min?: unknown; max?: unknown } | undefined;
  const pagination = (body.pagination ?? {}) as Body;
  return {
    query: body.query,
    filters: {
      categories: filters.categories,
      brands: filters.brands,
      ...(price ? { price: { currency, min: price.min, max: price.max } } : {}),
      available: filters.available,
      options: filters.options,
      conditions: filters.conditions,
      pricedIn: currency,
    },
    limit: pagination.limit,
    cursor: pagination.cursor,
  };
}

/** The domain's pointer into its input as a JSONPath into UCP's search body. */
const searchPath = (pointer: string): string => {
  if (pointer === '') return '$';
  if (pointer.startsWith('/limit')) return '$.pagination.limit';
  if (pointer.startsWith('/cursor')) return '$.pagination.cursor';
  return `$${pointer.replace(/\/(\d+)/g, '[$1]').replace(/\//g, '.')}`;
};

/** Registers the three routes in the UCP endpoint's scope (routes.ts `registerUcpRoutes`, its parser and errors). */
export function registerUcpCatalogRoutes(scope: FastifyInstance, d: UcpCatalogDeps): void {
  const identify = ucpIdentityStep(d.keys, d.signatures, d.log, d.linking);
  // The catalog is public: identity is checked when the call carries one, and only then.
  const optionalIdentity = async (req: FastifyRequest, reply: FastifyReply) => {
    const h = req.headers;
    if (h.authorization === undefined && h.signature === undefined && h['signature-input'] === undefined)
      return;
    return identify(req, reply);
  };
  const gate = (capability: string) => [
    ucpAgentStep(d.profiles),
    optionalIdentity,
    rateLimitStep({
      store: d.buckets,
      policy: d.bucketPolicy,
      clock: d.clock,
      keyOf: (req) => req.agent.identity?.id ?? `ucp-catalog:${sourceOf(req.socket.remoteAddress)}`,
    }),
    ucpProfileStep(d.profiles, capability, d.continueUrl),
  ];
  const audit = auditStep(d.audit, d.clock);
  const route = (capability: string, def: UcpDef) => ({
    bodyLimit: d.bodyLimit,
    onRequest: gate(capability),
    preParsing: [mediaTypeStep(d.bodyLimit)],
    preValidation: [requireJson, contract(def)],
    onSend: [problemAsUcpError, echoRequestId, ...(d.signResponse ? [d.signResponse] : [])],
    onResponse: [
      async (req: FastifyRequest, reply: FastifyReply) =>
        req.agent?.identity ? audit(req, reply) : undefined,
    ],
  });
  const send = (reply: FastifyReply, body: unknown) =>
    reply.code(200).type('application/json').send(JSON.stringify(body));
  const contextOf = (req: FastifyRequest): CatalogContext => ({
    ...catalogContext((req.body as Body).context, d.defaultRegion),
    ...(req.agent.identity ? { agent: req.agent.identity } : {}),
  });
  scope.post('/catalog/search', {
    ...route(CATALOG_SEARCH, 'catalog_search_request'),
    async handler(req, reply) {
      const ctx = contextOf(req);
      let page: Awaited<ReturnType<CatalogService['search']>>;
      try {
        page = await d.catalog.search(searchInputOf(req.body as Body, ctx.currency), ctx, {
          maxVariants: SEARCH_VARIANTS,
        });
      } catch (err) {
        if (!(err instanceof SearchInputError)) throw err;
        req.agent.reason = `catalog: ${err.message}`;
        return sendUcpError(reply, refusal(err, searchPath));
      }
      const products = page.products.flatMap((p) => {
        const r = renderProduct(p, ctx.currency);
        return r ? [r] : [];
      });
      const messages = [
        ...(page.correctedQuery
          ? [
              {
                type: 'info',
                code: 'query_corrected',
                content: `Showing results for "${page.correctedQuery}".`,
              },
            ]
          : []),
        ...budgetMessages(products, variantsBySku(page.products)),
      ];
      return send(reply, {
        ucp: catalogUcp(CATALOG_SEARCH),
        products,
        pagination: {
          has_next_page: page.nextCursor !== undefined,
          ...(page.nextCursor ? { cursor: page.nextCursor } : {}),
          // "If available" (types/pagination.json): a capped count is not the total, so none.
          ...(page.totalCapped ? {} : { total_count: page.total }),
        },
        ...(messages.length > 0 ? { messages } : {}),
      });
    },
  });

  scope.post('/catalog/lookup', {
    ...route(CATALOG_LOOKUP, 'catalog_lookup_request'),
    async handler(req, reply) {
      const ids = (req.body as { ids: string[] }).ids;
      if (ids.length > MAX_LOOKUP_IDS) {
        req.agent.reason = `catalog: ${ids.length} identifiers`;
        return sendUcpError(
          reply,
          ucpError(400, 'request_too_large', `At most ${MAX_LOOKUP_IDS} identifiers per lookup.`, {
            path: '$.ids',
          }),
        );
      }
      const ctx = contextOf(req);
      const found = await d.catalog.lookup(ids, ctx);
      const products = found.products.flatMap(({ product, inputs }) => {
        const r = renderProduct(product, ctx.currency, { inputsOf: (sku) => inputs.get(sku) });
        return r ? [r] : [];
      });
      const messages = [
        ...found.notFound.map((id) => ({ type: 'info', code: 'not_found', content: id })),
        ...budgetMessages(products, variantsBySku(found.products.map((f) => f.product))),
      ];
      return send(reply, {
        ucp: catalogUcp(CATALOG_LOOKUP),
        products,
        ...(messages.length > 0 ? { messages } : {}),
      });
    },
  });

  scope.post('/catalog/product', {
    ...route(CATALOG_LOOKUP, 'catalog_get_product_request'),
    async handler(req, reply) {
      const body = req.body as {
        id: string;
        selected?: { name: string; label: string }[];
        preferences?: string[];
      };
      const ctx = contextOf(req);
      const found = await d.catalog.product(body.id, ctx);
      const notFound = () =>
        send(reply, {
          ucp: catalogUcp(CATALOG_LOOKUP, 'error'),
          messages: [
            {
              type: 'error',
              code: 'not_found',
              content: `Product not found: ${body.id.slice(0, 200)}`,
              severity: 'unrecoverable',
            },
          ],
        });
      if (!found) return notFound();
      const selection = selectOptions(found.product, {
        selected: (body.selected ?? []).map((s): Selection => ({ name: s.name, value: s.label })),
        ...(body.preferences ? { preferences: body.preferences } : {}),
        ...(found.variantSku ? { variantSku: found.variantSku } : {}),
      });
      const product = renderProduct(found.product, ctx.currency, { selection });
      if (!product) return notFound();
      const messages = budgetMessages([product], variantsBySku([found.product]));
      return send(reply, {
        ucp: catalogUcp(CATALOG_LOOKUP),
        product,
        ...(messages.length > 0 ? { messages } : {}),
      });
    },
  });
}

const variantsBySku = (
  products: readonly (Omit<CatalogProduct, 'variants'> & { variants: readonly PricedVariant[] })[],
) => new Map(products.flatMap((p) => p.variants.map((v) => [v.sku, v] as const)));
