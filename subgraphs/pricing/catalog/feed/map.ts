/**
 * An ACP feed `Product` as the catalog's product, and back, purely. What a feed does not carry
 * and the catalog needs is decided here, once (docs/catalog.md, "From a feed"):
 *
 * - a variant's SKU is assigned by the import (its own id when that is already a SKU in the
 *   spec's pattern, else one made from the product's category; import/skus.ts) and kept for good;
 *   the feed's variant id stays beside it, and checkout takes either;
 * - the category promotions match on is the first level of the first category, lower case
 *   ("Office > Chairs" → `office`); none: `uncategorized`;
 * - stock: a feed says whether a variant can be bought, not how many there are, so an available
 *   variant counts 100 units (no scarcity or overstock modifier applies), one in `limited_stock`
 *   5 (the scarcity surcharge does), an unavailable one 0;
 * - a price is minor units of its currency (1999 USD = 19.99); a list price counts only in the
 *   price's currency;
 * - the plain description is the feed's plain text, else its HTML without tags, else its
 *   Markdown; the product's title, else its first variant's.
 */
import { minorUnits } from '../../../../lib/graphql/decimal.ts';
import { cutText } from '../../../../lib/json/well-formed.ts';
import { money } from '../../../../lib/money.ts';
import {
  type CatalogProduct,
  type CatalogProductInput,
  type CatalogVariantInput,
  type Media,
  mediaJson,
  type ProductOption,
} from '../model.ts';
import type { FeedMedia, FeedPrice, FeedProduct } from './line.ts';

export const AVAILABLE_STOCK = 100;
export const LIMITED_STOCK = 5;

const decimal = (p: FeedPrice): string =>
  money(p.amount)
    .dividedBy(10 ** minorUnits(p.currency))
    .toFixed(minorUnits(p.currency));

const minor = (amount: string, currency: string): number =>
  Number(
    money(amount)
      .times(10 ** minorUnits(currency))
      .toFixed(0),
  );

const media = (m: readonly FeedMedia[] | undefined): Media[] =>
  (m ?? []).map((x) => ({
    type: x.type,
    url: x.url,
    ...(x.alt_text !== undefined ? { altText: x.alt_text } : {}),
    ...(x.width !== undefined ? { width: x.width } : {}),
    ...(x.height !== undefined ? { height: x.height } : {}),
  }));

const plainOf = (d: FeedProduct['description']): string =>
  d?.plain ??
  d?.html
    ?.replace(/<[^>]*>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim() ??
  d?.markdown ??
  '';

/** The promotions' category of a product: the first level of its first category, lower case. */
export function promotionCategory(categories: readonly string[]): string {
  const top = categories[0]?.split('>')[0]?.trim().toLowerCase();
  return top ? cutText(top, 64) : 'uncategorized';
}

function stockOf(availability: { available?: boolean; status?: string } | undefined): {
  level: number;
  status?: string;
} {
  const status = availability?.status;
  const available =
    availability?.available ?? (status ? !['out_of_stock', 'discontinued'].includes(status) : true);
  if (!available) return { level: 0, status: status ?? 'out_of_stock' };
  return {
    level: status === 'limited_stock' ? LIMITED_STOCK : AVAILABLE_STOCK,
    ...(status ? { status } : {}),
  };
}

/** The product's options: each option name its variants use, with their values in first-seen order. */
function optionsOf(p: FeedProduct): ProductOption[] {
  const byName = new Map<string, string[]>();
  for (const v of p.variants)
    for (const o of v.variant_options ?? []) {
      const values = byName.get(o.name) ?? [];
      if (!values.includes(o.value)) values.push(o.value);
      byName.set(o.name, values);
    }
  return [...byName.entries()].map(([name, values]) => ({ name, values }));
}

/** The catalog's product from a feed product; `skuOf` gives each variant's SKU by its id. */
export function productOfFeed(p: FeedProduct, skuOf: (variantId: string) => string): CatalogProductInput {
  const categories = [
    ...new Set(p.variants.flatMap((v) => (v.categories ?? []).map((c) => c.value.trim())).filter(Boolean)),
  ];
  const category = promotionCategory(categories);
  const title = p.title ?? p.variants[0]?.title ?? p.id;
  const variants: CatalogVariantInput[] = p.variants.map((v) => {
    const stock = stockOf(v.availability);
    const prices = v.price ? { [v.price.currency]: decimal(v.price) } : {};
    const listPrices =
      v.list_price && v.price && v.list_price.currency === v.price.currency
        ? { [v.list_price.currency]: decimal(v.list_price) }
        : undefined;
    const seller = v.seller?.name ?? v.marketplace?.name;
    const description = v.description ? plainOf(v.description) : '';
    return {
      sku: skuOf(v.id),
      variantId: v.id,
      title: v.title,
      name: v.title,
      category,
      inventoryLevel: stock.level,
      prices,
      ...(listPrices ? { listPrices } : {}),
      ...(stock.status ? { availability: stock.status } : {}),
      options: (v.variant_options ?? []).map((o) => ({ name: o.name, value: o.value })),
      barcodes: (v.barcodes ?? []).map((b) => ({ type: b.type, value: b.value })),
      media: media(v.media),
      ...(v.url ? { url: v.url } : {}),
      ...(seller ? { seller } : {}),
      ...(description
        ? {
            description: { plain: description, ...(v.description?.html ? { html: v.description.html } : {}) },
          }
        : {}),
    };
  });
  const condition = p.variants.find((v) => v.condition?.length)?.condition?.[0]?.toLowerCase() ?? 'new';
  return {
    productId: p.id,
    title,
    description: {
      plain: plainOf(p.description),
      ...(p.description?.html ? { html: p.description.html } : {}),
    },
    ...(p.url ? { url: p.url } : {}),
    categories,
    condition,
    media: media(p.media),
    options: optionsOf(p),
    tags: [],
    variants,
  };
}

/**
 * The catalog's product as an ACP feed `Product` priced in `currency` (a feed variant has one
 * price): variants without a price in it are left out, and a product without any is undefined.
 */
export function feedOfProduct(p: CatalogProduct, currency: string): Record<string, unknown> | undefined {
  const variants = p.variants.flatMap((v) => {
    const amount = v.prices[currency];
    if (amount === undefined) return [];
    const list = v.listPrices?.[currency];
    return [
      {
        id: v.variantId,
        title: v.title,
        ...(v.description
          ? {
              description: {
                plain: v.description.plain,
                ...(v.description.html ? { html: v.description.html } : {}),
              },
            }
          : {}),
        ...(v.url ? { url: v.url } : {}),
        ...(v.barcodes.length > 0
          ? { barcodes: v.barcodes.map((b) => ({ type: b.type, value: b.value })) }
          : {}),
        price: { amount: minor(amount, currency), currency },
        ...(list ? { list_price: { amount: minor(list, currency), currency } } : {}),
        availability: { available: v.available, status: v.availability },
        ...(p.categories.length > 0
          ? { categories: p.categories.map((value) => ({ value, taxonomy: 'merchant' })) }
          : {}),
        condition: [p.condition],
        ...(v.options.length > 0
          ? { variant_options: v.options.map((o) => ({ name: o.name, value: o.value })) }
          : {}),
        ...(v.media.length > 0 ? { media: mediaJson(v.media) } : {}),
        ...(v.seller ? { seller: { name: v.seller } } : {}),
      },
    ];
  });
  if (variants.length === 0) return undefined;
  return {
    id: p.productId,
    title: p.title,
    ...(p.description.plain || p.description.html
      ? {
          description: {
            ...(p.description.plain ? { plain: p.description.plain } : {}),
            ...(p.description.html ? { html: p.description.html } : {}),
          },
        }
      : {}),
    ...(p.url ? { url: p.url } : {}),
    ...(p.media.length > 0 ? { media: mediaJson(p.media) } : {}),
    variants,
  };
}
