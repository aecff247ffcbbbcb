import { GraphQLError } from 'graphql';
import type { RequestContext } from '../../lib/auth/context.ts';
import { exactAmount } from '../../lib/graphql/decimal.ts';
import { mappingErrors } from '../../lib/graphql/error-mapping.ts';
import type { Money } from '../../lib/money.ts';
import type { PricedBasket, PricedLine, RedemptionRequest, ReleaseRequest } from './api.ts';
import { BasketInvalid, PromotionNotFound, RedemptionInvalid, RuleInvalid } from './domain/errors.ts';
import type { RuleStatus } from './domain/rule.ts';
import type { Promotion, PromotionEngine } from './service.ts';

/** Domain errors → GraphQL errors, in one place. */
function graphqlError(err: unknown): unknown {
  if (err instanceof RuleInvalid || err instanceof BasketInvalid || err instanceof RedemptionInvalid)
    return new GraphQLError(err.message, {
      extensions: { code: 'BAD_USER_INPUT', errors: err.errors, http: { status: 422 } },
    });
  if (err instanceof PromotionNotFound)
    return new GraphQLError(err.message, {
      extensions: { code: 'NOT_FOUND', promotionId: err.promotionId, http: { status: 404 } },
    });
  return err;
}

const mapped = mappingErrors(graphqlError);

const toGraphql = (p: Promotion) => ({
  promotionId: p.promotionId,
  name: p.compiled.name,
  priority: p.compiled.priority,
  status: p.compiled.status,
  stacking: p.compiled.stacking,
  couponCodes: p.compiled.couponCodes,
  maxRedemptionsPerUser: p.compiled.maxRedemptionsPerUser ?? null,
  validFrom: p.document.valid_from ?? null,
  validUntil: p.document.valid_until ?? null,
  revision: p.revision,
  updatedAt: p.updatedAt,
  rule: p.document,
});

/** GraphQL input objects carry explicit nulls; the contract (like JSON) wants them absent. */
function withoutNulls<T>(value: T): T {
  if (Array.isArray(value)) return value.map(withoutNulls) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => [k, withoutNulls(v)]),
  ) as T;
}

/** The entity representation the gateway sends, with the fields of `@requires`. */
interface CartQuoteRepresentation {
  id: string;
  currency: string;
  customerSegment?: string | null;
  customerId?: string | null;
  coupons?: string[] | null;
  lines: { sku: string; category: string; quantity: number; unitPrice: number; lineTotal?: number | null }[];
}

/** The priced lines of the pricing subgraph's CartQuote, as a basket. */
export const basketOfQuote = (q: CartQuoteRepresentation): PricedBasket =>
  withoutNulls({
    currency: q.currency,
    ...(q.customerId || q.customerSegment
      ? { customer: { id: q.customerId ?? null, segment: q.customerSegment ?? null } }
      : {}),
    coupons: q.coupons ?? [],
    lines: q.lines.map((l) => ({
      sku: l.sku,
      category: l.category,
      quantity: l.quantity,
      unitPrice: l.unitPrice,
      lineTotal: l.lineTotal ?? null,
    })),
  }) as PricedBasket;

/** A basket as GraphQL's PricedBasketInput carries it: each amount as a Float or its Decimal twin. */
interface PricedBasketGraphqlInput extends Omit<PricedBasket, 'lines'> {
  lines: (Omit<PricedLine, 'unitPrice' | 'lineTotal'> & {
    unitPrice?: number | null;
    unitPriceDecimal?: Money | null;
    lineTotal?: number | null;
    lineTotalDecimal?: Money | null;
  })[];
}

/** The basket with one exact amount per field (lib/graphql/decimal.ts), as the engine takes it. */
function basketOfInput(input: PricedBasketGraphqlInput, at: string): PricedBasket {
  // The amounts first: withoutNulls must not walk into a Decimal object.
  const lines = input.lines.map(
    ({ unitPrice, unitPriceDecimal, lineTotal, lineTotalDecimal, ...line }, i) => {
      const where = { at: `${at}lines/${i}/` };
      const unit = exactAmount(
        { float: unitPrice, decimal: unitPriceDecimal },
        input.currency,
        'unitPrice',
        where,
      );
      const total = exactAmount(
        { float: lineTotal, decimal: lineTotalDecimal },
        input.currency,
        'lineTotal',
        {
          ...where,
          required: false,
        },
      );
      return { ...line, unitPrice: unit, lineTotal: total };
    },
  );
  return withoutNulls({ ...input, lines }) as PricedBasket;
}

export function promotionsResolvers(engine: PromotionEngine) {
  return {
    Query: {
      promotions: (_: unknown, { status }: { status?: RuleStatus | null }) =>
        engine.list(status ?? undefined).map(toGraphql),
      promotion: (_: unknown, { promotionId }: { promotionId: string }) => {
        const p = engine.get(promotionId);
        return p ? toGraphql(p) : null;
      },
      evaluatePromotions: mapped((_: unknown, { basket }: { basket: PricedBasketGraphqlInput }) =>
        engine.evaluate(basketOfInput(basket, '/')),
      ),
      previewPromotions: mapped(
        (_: unknown, { basket, draftRules }: { basket: PricedBasketGraphqlInput; draftRules: unknown[] }) =>
          engine.preview(basketOfInput(basket, '/'), draftRules),
      ),
    },
    Mutation: {
      upsertPromotion: mapped(async (_: unknown, { rule }: { rule: unknown }, ctx: RequestContext) =>
        toGraphql(await engine.upsert(rule, ctx.caller.subject)),
      ),
      setPromotionStatus: mapped(
        async (
          _: unknown,
          { promotionId, status }: { promotionId: string; status: RuleStatus },
          ctx: RequestContext,
        ) => toGraphql(await engine.setStatus(promotionId, status, ctx.caller.subject)),
      ),
      redeemPromotions: mapped((_: unknown, { input }: { input: RedemptionRequest }) =>
        engine.redeem(withoutNulls(input)),
      ),
      releasePromotionRedemptions: mapped((_: unknown, { input }: { input: ReleaseRequest }) =>
        engine.release(withoutNulls(input)),
      ),
    },
    CartQuote: {
      __resolveReference: (ref: CartQuoteRepresentation) => ref,
      promotions: mapped((quote: CartQuoteRepresentation) => engine.evaluate(basketOfQuote(quote))),
    },
  };
}
