/**
 * The catalog as agents and storefronts read it through the gateway's edges (UCP REST and MCP,
 * this system's MCP tool), protocol-neutral: search, lookup and product detail from the
 * pricing subgraph's catalog (subgraphs/pricing/catalog/products.ts), every variant priced for the
 * caller through the cart quote's own flow (a one-line quote: modifiers, cache, fallbacks,
 * promotions; gateway/edge/quote/service.ts `offers`), and, for an agent with a spend policy,
 * what its budget says of each variant. Each edge parses its protocol, calls this and renders.
 */
import type { SpiffeId } from '../../lib/auth/spiffe.ts';
import type { Clock } from '../../lib/clock.ts';
import type { CatalogProduct, CatalogVariant } from '../../subgraphs/pricing/catalog/model.ts';
import type { CatalogProducts, LookupMatch } from '../../subgraphs/pricing/catalog/products.ts';
import { type SearchInput, searchRequest } from '../../subgraphs/pricing/catalog/search/request.ts';
import type { SearchFacets } from '../../subgraphs/pricing/catalog/search/sql.ts';
import type { SpendLedger } from '../../subgraphs/procurement/spend/ledger.ts';
import {
  approvalsRequired,
  candidateSubjects,
  skuAllowed,
} from '../../subgraphs/procurement/spend/policy.ts';
import type { QuoteBody } from '../../subgraphs/promotions/quote/assemble.ts';

/** Who asks and in what market: the quote's context. */
export interface CatalogContext {
  readonly currency: string;
  readonly region: string;
  readonly customerSegment?: string;
  readonly customerId?: string;
  readonly coupons?: readonly string[];
  /** An agent: its spend policy judges each variant's price. */
  readonly agent?: SpiffeId;
}

/** What an agent's spend policy says of buying one unit of a variant now. */
export interface BudgetVerdict {
  /** The price fits what is left of the period's budget (and the per-order cap). */
  readonly withinBudget: boolean;
  /** Buying it would wait for one (or two) operators' approval. */
  readonly approvalsRequired: 0 | 1 | 2;
  /** The policy allows the SKU at all. */
  readonly skuAllowed: boolean;
  /** What is left of the period's budget, in the policy's currency (USD), exact decimal text. */
  readonly remaining: string;
}

export interface PricedVariant extends CatalogVariant {
  /** The caller's price for one unit (a one-line quote); absent when it has no price in the currency. */
  readonly offer?: QuoteBody;
  /** For an agent with a spend policy, in the policy's currency. */
  readonly budget?: BudgetVerdict;
}

export interface PricedProduct extends Omit<CatalogProduct, 'variants'> {
  readonly variants: readonly PricedVariant[];
}

export interface PricedSearch {
  readonly products: readonly PricedProduct[];
  readonly total: number;
  /** The total is a lower bound: more matched (search/degrade.ts). */
  readonly totalCapped?: boolean;
  readonly nextCursor?: string;
  readonly facets?: SearchFacets;
  readonly correctedQuery?: string;
}

export interface PricedLookup {
  readonly products: readonly {
    product: PricedProduct;
    inputs: ReadonlyMap<string, readonly LookupMatch[]>;
  }[];
  readonly notFound: readonly string[];
}

export interface CatalogService {
  /** Throws SearchInputError for a request the domain refuses. */
  search(input: SearchInput, ctx: CatalogContext, opts?: { maxVariants?: number }): Promise<PricedSearch>;
  lookup(ids: readonly string[], ctx: CatalogContext): Promise<PricedLookup>;
  product(
    id: string,
    ctx: CatalogContext,
  ): Promise<{ product: PricedProduct; variantSku?: string } | undefined>;
  /** The SKU each id names (a SKU, or a merchant's variant id); undefined when unknown. */
  skuOf(ids: readonly string[]): Promise<(string | undefined)[]>;
}

export interface CatalogServiceDeps {
  readonly products: CatalogProducts;
  readonly offers: (
    skus: readonly string[],
    ctx: Omit<CatalogContext, 'agent'> & { coupons: string[] },
  ) => Promise<(QuoteBody | undefined)[]>;
  readonly ledger?: SpendLedger;
  readonly clock: Clock;
}

const cents = (amount: number) => Math.round(amount * 100);

export function createCatalogService(deps: CatalogServiceDeps): CatalogService {
  /** Every variant of the products priced in one quote batch, and judged by the agent's policy. */
  async function priced(products: readonly CatalogProduct[], ctx: CatalogContext): Promise<PricedProduct[]> {
    const skus = [...new Set(products.flatMap((p) => p.variants.map((v) => v.sku)))];
    const quotes = await deps.offers(skus, {
      currency: ctx.currency,
      region: ctx.region,
      ...(ctx.customerSegment ? { customerSegment: ctx.customerSegment } : {}),
      ...(ctx.customerId ? { customerId: ctx.customerId } : {}),
      coupons: [...(ctx.coupons ?? [])],
    });
    const offerOf = new Map(skus.map((s, i) => [s, quotes[i]]));
    const status =
      ctx.agent && deps.ledger
        ? await deps.ledger.status(candidateSubjects(ctx.agent), deps.clock.now())
        : null;
    return products.map((p) => ({
      ...p,
      variants: p.variants.map((v) => {
        const offer = offerOf.get(v.sku);
        let budget: BudgetVerdict | undefined;
        // A policy's currency is USD: a price in another currency is not judged by it.
        if (status && offer && offer.currency === status.policy.currency) {
          const price = cents(offer.total);
          const left = Math.max(0, status.policy.budgetCents - status.spentCents);
          const perOrder = status.policy.maxPerOrderCents ?? Number.POSITIVE_INFINITY;
          budget = {
            withinBudget: price <= left && price <= perOrder,
            approvalsRequired: approvalsRequired(status.policy, price),
            skuAllowed: skuAllowed(status.policy, v.sku),
            remaining: (left / 100).toFixed(2),
          };
        }
        return { ...v, ...(offer ? { offer } : {}), ...(budget ? { budget } : {}) };
      }),
    }));
  }

  return {
    async search(input, ctx, opts = {}) {
      const page = await deps.products.search(searchRequest(input));
      const max = opts.maxVariants ?? Number.POSITIVE_INFINITY;
      const trimmed = page.products.map((p) => ({ ...p, variants: p.variants.slice(0, max) }));
      return {
        products: await priced(trimmed, ctx),
        total: page.total,
        ...(page.totalCapped ? { totalCapped: true } : {}),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
        ...(page.facets ? { facets: page.facets } : {}),
        ...(page.correctedQuery ? { correctedQuery: page.correctedQuery } : {}),
      };
    },
    async lookup(ids, ctx) {
      const found = await deps.products.lookup(ids);
      const pricedProducts = await priced(
        found.products.map((f) => f.product),
        ctx,
      );
      return {
        products: found.products.map((f, i) => ({
          product: pricedProducts[i] as PricedProduct,
          inputs: f.inputs,
        })),
        notFound: found.notFound,
      };
    },
    skuOf: (ids) => deps.products.skuOf(ids),
    async product(id, ctx) {
      const found = await deps.products.product(id);
      if (!found) return undefined;
      const [product] = await priced([found.product], ctx);
      return {
        product: product as PricedProduct,
        ...(found.variantSku ? { variantSku: found.variantSku } : {}),
      };
    },
  };
}
