/**
 * The catalog as UCP shows it (catalog/index.md, search.md, lookup.md; types/product.json,
 * variant.json): pure functions from the gateway's priced catalog (gateway/catalog/service.ts)
 * to the release's shapes. Prices are minor units of the currency; a variant's `price` is what
 * the caller pays for one unit (its one-line quote: modifiers and promotions), its `list_price`
 * the catalog's base price when that is higher (or the merchant's own reference price). A
 * variant's `id` is the merchant's variant id (a feed's `Variant.id`, the SKU for the seed), the
 * id checkout takes as `item.id`; `sku` is the SKU.
 */
import { minorUnits } from '../../../lib/graphql/decimal.ts';
import { money } from '../../../lib/money.ts';
import type { Media } from '../../../subgraphs/pricing/catalog/model.ts';
import type { LookupMatch } from '../../../subgraphs/pricing/catalog/products.ts';
import type { SelectionResult } from '../../../subgraphs/pricing/catalog/selection.ts';
import type { PricedProduct, PricedVariant } from '../../catalog/service.ts';
import { UCP_VERSION } from './schema/index.ts';

type Json = Record<string, unknown>;

export const CATALOG_SEARCH = 'dev.ucp.shopping.catalog.search';
export const CATALOG_LOOKUP = 'dev.ucp.shopping.catalog.lookup';

/** An exact decimal amount in a currency's minor units (19.99 USD → 1999). */
export const minorOf = (amount: string | number, currency: string): number =>
  Number(
    money(amount)
      .times(10 ** minorUnits(currency))
      .toFixed(0),
  );

const media = (m: readonly Media[]) =>
  m.map((x) => ({
    type: x.type,
    url: x.url,
    ...(x.altText ? { alt_text: x.altText } : {}),
    ...(x.width ? { width: x.width } : {}),
    ...(x.height ? { height: x.height } : {}),
  }));

/** The caller's price for one unit (the quote's total), or the base price when it could not be quoted. */
function priceOf(v: PricedVariant, currency: string): { amount: number; currency: string } | undefined {
  if (v.offer) return { amount: minorOf(v.offer.total, currency), currency };
  const base = v.prices[currency];
  return base !== undefined ? { amount: minorOf(base, currency), currency } : undefined;
}

function listPriceOf(
  v: PricedVariant,
  currency: string,
  price: number,
): { amount: number; currency: string } | undefined {
  const reference = v.listPrices?.[currency] ?? v.prices[currency];
  if (reference === undefined) return undefined;
  const amount = minorOf(reference, currency);
  return amount > price ? { amount, currency } : undefined;
}

export function renderVariant(
  v: PricedVariant,
  currency: string,
  inputs?: readonly LookupMatch[],
): Json | undefined {
  const price = priceOf(v, currency);
  if (!price) return undefined;
  const list = listPriceOf(v, currency, price.amount);
  return {
    id: v.variantId,
    sku: v.sku,
    ...(v.barcodes.length > 0 ? { barcodes: v.barcodes.map((b) => ({ type: b.type, value: b.value })) } : {}),
    title: v.title,
    description: { plain: v.description?.plain ?? v.name },
    ...(v.url ? { url: v.url } : {}),
    price,
    ...(list ? { list_price: list } : {}),
    availability: { available: v.available, status: v.availability },
    ...(v.options.length > 0 ? { options: v.options.map((o) => ({ name: o.name, label: o.value })) } : {}),
    ...(v.media.length > 0 ? { media: media(v.media) } : {}),
    ...(v.seller ? { seller: { name: v.seller } } : {}),
    ...(inputs ? { inputs: inputs.map((i) => ({ id: i.id, match: i.match })) } : {}),
  };
}

/**
 * A product with the variants that have a price in the currency (a variant without one cannot be
 * bought in it); undefined when none has. `inputsOf` gives lookup's correlation by SKU (a lookup
 * shows only the variants an identifier resolved to).
 */
export function renderProduct(
  p: PricedProduct,
  currency: string,
  opts: {
    inputsOf?: (sku: string) => readonly LookupMatch[] | undefined;
    selection?: SelectionResult<PricedVariant>;
  } = {},
): Json | undefined {
  const source = opts.selection ? opts.selection.variants : p.variants;
  const variants = source.flatMap((v) => {
    const inputs = opts.inputsOf ? opts.inputsOf(v.sku) : undefined;
    if (opts.inputsOf && !inputs) return [];
    const r = renderVariant(v, currency, inputs);
    return r ? [r] : [];
  });
  if (variants.length === 0) return undefined;
  const amounts = variants.map((v) => (v.price as { amount: number }).amount);
  const lists = variants.map(
    (v) => (v.list_price as { amount: number } | undefined)?.amount ?? (v.price as { amount: number }).amount,
  );
  const range = (xs: number[]) => ({
    min: { amount: Math.min(...xs), currency },
    max: { amount: Math.max(...xs), currency },
  });
  const options = opts.selection
    ? opts.selection.options.map((o) => ({
        name: o.name,
        values: o.values.map((x) => ({ label: x.value, available: x.available, exists: x.exists })),
      }))
    : p.options.map((o) => ({ name: o.name, values: o.values.map((label) => ({ label })) }));
  return {
    id: p.productId,
    ...(p.handle ? { handle: p.handle } : {}),
    title: p.title,
    description: {
      plain: p.description.plain || p.title,
      ...(p.description.html ? { html: p.description.html } : {}),
    },
    ...(p.url ? { url: p.url } : {}),
    categories: p.categories.map((value) => ({ value, taxonomy: 'merchant' })),
    price_range: range(amounts),
    ...(lists.some((l, i) => l > (amounts[i] as number)) ? { list_price_range: range(lists) } : {}),
    ...(p.media.length > 0 ? { media: media(p.media) } : {}),
    ...(options.length > 0 ? { options } : {}),
    ...(opts.selection && opts.selection.selected.length > 0
      ? { selected: opts.selection.selected.map((s) => ({ name: s.name, label: s.value })) }
      : {}),
    variants,
    ...(p.tags.length > 0 ? { tags: [...p.tags] } : {}),
    metadata: { condition: p.condition, ...(p.brand ? { brand: p.brand } : {}) },
  };
}

/** What an agent's spend policy says of each variant shown, as messages on the variant's path. */
export function budgetMessages(
  products: readonly Json[],
  priced: ReadonlyMap<string, PricedVariant>,
): Json[] {
  const out: Json[] = [];
  products.forEach((p, i) => {
    ((p.variants as Json[]) ?? []).forEach((v, j) => {
      const b = priced.get(v.sku as string)?.budget;
      if (!b) return;
      const path = `$.products[${i}].variants[${j}]`;
      if (!b.skuAllowed)
        out.push({
          type: 'warning',
          code: 'spend_policy_sku_not_allowed',
          path,
          content: 'Your spend policy does not allow this item.',
        });
      else if (!b.withinBudget)
        out.push({
          type: 'warning',
          code: 'over_budget',
          path,
          content: `This item costs more than your spend policy leaves for this period (${b.remaining} USD left) or allows per order.`,
        });
      else if (b.approvalsRequired > 0)
        out.push({
          type: 'info',
          code: 'approval_required',
          path,
          content: `Buying this item waits for ${b.approvalsRequired === 2 ? 'two operators’' : 'an operator’s'} approval under your spend policy.`,
        });
    });
  });
  return out;
}

/** The `ucp` object of a catalog response: the capability the operation belongs to, as negotiated. */
export const catalogUcp = (capability: string, status: 'success' | 'error' = 'success'): Json => ({
  version: UCP_VERSION,
  ...(status === 'error' ? { status } : {}),
  capabilities: { [capability]: [{ version: UCP_VERSION }] },
});
