/**
 * The generated catalog as a merchant would publish it: products with titles, brands,
 * descriptions (plain and HTML), a taxonomy path, media, barcodes and option values, grouping
 * the SKUs of ../generate.ts as their variants. Deterministic like them: the same size always
 * gives the same products.
 *
 * Its own random stream (another seed), so the SKUs' stock stays what it was, and the first ten
 * SKUs of each category (the fixtures tests name) stay one-variant products at their prices, of
 * a type whose price range holds them. From the eleventh, a category's SKUs are grouped, in
 * order, into products of one to four variants that differ by one option (colour, size,
 * weight…), priced in their type's range (a chair costs what chairs cost), in the currencies the
 * first SKU had; a variant after the first costs the first's price times its option's step (a
 * larger size costs more, a colour does not).
 *
 * Titles are distinct: brand, adjective and type repeat (a few hundred such titles per category),
 * so the second product of a title and the ones after it take a product line's name after the
 * brand, as a merchant's range does ("Oakhurst Aria Ergonomic Mesh Office Chair"): the n-th
 * repeat the n-th of SERIES, then its generations ("Aria 2"). Counted, not drawn, so the random
 * stream and everything else it makes stay what they were.
 */
import type { CatalogProductInput, CatalogVariantInput } from '../model.ts';
import { type CategoryVocabulary, type ProductType, RATES, SERIES, VOCABULARY } from './vocabulary.ts';

/** A SKU as ../generate.ts makes it, before grouping. */
export interface SkuRow {
  sku: string;
  name: string;
  category: string;
  inventoryLevel: number;
  prices: Record<string, string>;
}

const FIXTURES_PER_CATEGORY = 10;
const SHOP = 'https://shop.agent-commerce.example';
const CDN = 'https://cdn.agent-commerce.example/catalog';

/** mulberry32: a tiny seeded PRNG (as ../generate.ts), so the catalog needs no dependency. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Shelf prices end in .99, .49 or .00, like real ones; computed in integer cents. */
export function shelfPriceCents(random: () => number, min: number, max: number): number {
  // Log-uniform: many cheap items, few expensive ones.
  const dollars = Math.floor(Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min))));
  const ending = [99, 49, 0][Math.floor(random() * 3)] ?? 99;
  return Math.max(1, dollars) * 100 + ending;
}

export const centsText = (cents: number): string =>
  `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

const pick = <T>(random: () => number, list: readonly T[]): T =>
  list[Math.floor(random() * list.length)] as T;

export const slug = (s: string): string =>
  s
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

/** A GTIN-13 with its check digit (GS1: weights 1 and 3 from the left). */
function gtin13(twelve: string): string {
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(twelve[i]) * (i % 2 === 0 ? 1 : 3);
  return `${twelve}${(10 - (sum % 10)) % 10}`;
}

/** `price × step` in whole units, ending in the same cents as the first variant's (.99, .49, .00). */
function stepped(amount: string, step: number): string {
  if (step === 1) return amount;
  const [whole = '0', cents = '00'] = amount.split('.');
  const units = Math.max(0, Math.floor(Number(whole) * step));
  return units === 0 && cents === '00' ? '1.00' : `${units}.${cents}`;
}

function describe(
  title: string,
  brand: string,
  adjective: string,
  type: ProductType,
  features: string[],
  closing: string,
): { plain: string; html: string } {
  const [a, b, c] = features;
  const what = `${adjective.toLowerCase()} ${type.name.toLowerCase()}`;
  const article = /^[aeiou]/.test(what) ? 'an' : 'a';
  const plain = `The ${title} is ${article} ${what} from ${brand} with ${a}, ${b} and ${c}. ${closing}`;
  const html = `<p>The <strong>${title}</strong> is ${article} ${what} from ${brand}.</p><ul>${features
    .map((f) => `<li>${f}</li>`)
    .join('')}</ul><p>${closing}</p>`;
  return { plain, html };
}

/** A fixture keeps its price: it gets a type whose price range holds it (the nearest otherwise). */
function typeFor(vocabulary: CategoryVocabulary, row: SkuRow, random: () => number): ProductType {
  const usd = Number(row.prices.USD ?? Number(row.prices.EUR ?? 10) / 0.92);
  const fitting = vocabulary.types.filter((t) => usd >= t.price[0] && usd <= t.price[1] + 1);
  if (fitting.length > 0) return pick(random, fitting);
  const distance = (t: ProductType) => Math.min(Math.abs(usd - t.price[0]), Math.abs(usd - t.price[1]));
  return [...vocabulary.types].sort((x, y) => distance(x) - distance(y))[0] as ProductType;
}

/** A grouped product's first price: its type's range, in the currencies the first SKU had. */
function pricesFor(type: ProductType, row: SkuRow, random: () => number): Record<string, string> {
  const usdCents = shelfPriceCents(random, type.price[0], type.price[1]);
  const out: Record<string, string> = {};
  for (const [currency, rate] of RATES)
    if (row.prices[currency] !== undefined)
      out[currency] = centsText(Math.max(1, Math.round(usdCents * rate)));
  return out;
}

interface GroupPlan {
  rows: SkuRow[];
  vocabulary: CategoryVocabulary;
  type: ProductType;
  /** One of the first SKUs of its category: it keeps its own price. */
  fixture: boolean;
  /** How many products each plain title ("brand adjective type") has named so far. */
  titles: Map<string, number>;
}

/** The plain title the first time, then with the next product line's name after the brand. */
function distinctTitle(titles: Map<string, number>, brand: string, adjective: string, type: ProductType) {
  const plain = `${brand} ${adjective} ${type.name}`;
  const repeat = titles.get(plain) ?? 0;
  titles.set(plain, repeat + 1);
  if (repeat === 0) return plain;
  const generation = Math.floor((repeat - 1) / SERIES.length) + 1;
  const series = `${SERIES[(repeat - 1) % SERIES.length]}${generation > 1 ? ` ${generation}` : ''}`;
  return `${brand} ${series} ${adjective} ${type.name}`;
}

function productOf(plan: GroupPlan, random: () => number): CatalogProductInput {
  const { rows, vocabulary, type, fixture, titles } = plan;
  const first = rows[0] as SkuRow;
  const firstPrices = fixture ? first.prices : pricesFor(type, first, random);
  const brand = pick(random, vocabulary.brands);
  const adjective = pick(random, type.adjectives);
  const features = [...type.features].sort(() => random() - 0.5).slice(0, 3);
  const title = distinctTitle(titles, brand, adjective, type);
  const handle = `${slug(title)}-${slug(first.sku.slice(4))}`;
  const multi = rows.length > 1;
  // Consecutive option values from a random start, so products of one type differ.
  const start = Math.floor(random() * Math.max(1, type.option.values.length - rows.length + 1));
  const condition = vocabulary.name === 'electronics' && random() < 0.08 ? 'refurbished' : 'new';
  const description = describe(title, brand, adjective, type, features, vocabulary.closing);
  const category = `${vocabulary.title} > ${type.shelf}`;
  const variants: CatalogVariantInput[] = rows.map((row, i) => {
    const valueIndex = start + i;
    const value = type.option.values[valueIndex] as string;
    const step = (type.option.steps?.[valueIndex] ?? 1) / (type.option.steps?.[start] ?? 1);
    const prices = Object.fromEntries(
      Object.entries(firstPrices).map(([currency, amount]) => [currency, stepped(amount, step)]),
    );
    const number = row.sku.slice(8);
    return {
      sku: row.sku,
      variantId: row.sku,
      title: multi ? value : title,
      name: multi ? `${title}, ${value}` : title,
      category: row.category,
      inventoryLevel: row.inventoryLevel,
      prices,
      options: multi ? [{ name: type.option.name, value }] : [],
      barcodes: [
        {
          type: 'GTIN',
          value: gtin13(
            `40${String(VOCABULARY.indexOf(vocabulary)).padStart(2, '0')}${number.padStart(8, '0')}`,
          ),
        },
      ],
      media: multi
        ? [{ type: 'image', url: `${CDN}/${handle}-${slug(value)}.jpg`, altText: `${title}, ${value}` }]
        : [],
      url: `${SHOP}/products/${handle}${multi ? `?variant=${row.sku}` : ''}`,
      seller: 'Agent Commerce Demo Store',
    };
  });
  return {
    productId: `prod_${first.sku.slice(4).toLowerCase().replace('-', '_')}`,
    handle,
    title,
    description,
    url: `${SHOP}/products/${handle}`,
    brand,
    categories: [category],
    condition,
    media: [{ type: 'image', url: `${CDN}/${handle}.jpg`, altText: title }],
    options: multi
      ? [{ name: type.option.name, values: variants.map((v) => v.options[0]?.value as string) }]
      : [],
    tags: [...type.tags],
    variants,
  };
}

/** The two anchors of ../generate.ts: the spec's rounding example and its toy, as they were. */
function anchorProduct(row: SkuRow): CatalogProductInput {
  const title = row.name;
  const handle = slug(`${title}-${row.sku.slice(4)}`);
  return {
    productId: `prod_${row.sku.slice(4).toLowerCase().replace('-', '_')}`,
    handle,
    title,
    description: {
      plain: `The ${title}: the catalog's first ${row.category === 'tools' ? 'tool' : 'toy'}, priced as the specification's examples.`,
      html: `<p>The <strong>${title}</strong>: the catalog's first ${row.category === 'tools' ? 'tool' : 'toy'}.</p>`,
    },
    url: `${SHOP}/products/${handle}`,
    brand: 'Agent Commerce',
    categories: [row.category === 'tools' ? 'Tools > Hand Tools' : 'Toys > Classics'],
    condition: 'new',
    media: [{ type: 'image', url: `${CDN}/${handle}.jpg`, altText: title }],
    options: [],
    tags: [row.category],
    variants: [
      {
        sku: row.sku,
        variantId: row.sku,
        title,
        name: title,
        category: row.category,
        inventoryLevel: row.inventoryLevel,
        prices: row.prices,
        options: [],
        barcodes: [],
        media: [],
        url: `${SHOP}/products/${handle}`,
        seller: 'Agent Commerce Demo Store',
      },
    ],
  };
}

/** Group sizes: one to four variants, fewer when the category runs out of SKUs. */
function groupSize(random: () => number): number {
  const r = random();
  return r < 0.3 ? 1 : r < 0.55 ? 2 : r < 0.8 ? 3 : 4;
}

/**
 * The products of the SKU rows `rows` (in ../generate.ts's order), `anchors` of them the
 * anchors. Each SKU is a variant of exactly one product.
 */
export function groupIntoProducts(
  rows: readonly SkuRow[],
  anchors: number,
  seed: number,
): CatalogProductInput[] {
  return [...productsOf(rows, anchors, seed)];
}

/** groupIntoProducts one product at a time (the same products, in the same order): a large seed holds none. */
export function* productsOf(
  rows: readonly SkuRow[],
  anchors: number,
  seed: number,
): Generator<CatalogProductInput> {
  const random = prng(seed ^ 0x5eed);
  const titles = new Map<string, number>();
  yield* rows.slice(0, anchors).map(anchorProduct);
  const byCategory = new Map<string, SkuRow[]>();
  for (const row of rows.slice(anchors)) {
    const list = byCategory.get(row.category) ?? [];
    list.push(row);
    byCategory.set(row.category, list);
  }
  for (const vocabulary of VOCABULARY) {
    const list = byCategory.get(vocabulary.name) ?? [];
    let i = 0;
    while (i < list.length) {
      const fixture = i < FIXTURES_PER_CATEGORY;
      const type = fixture ? typeFor(vocabulary, list[i] as SkuRow, random) : pick(random, vocabulary.types);
      const size = fixture ? 1 : Math.min(groupSize(random), type.option.values.length, list.length - i);
      yield productOf({ rows: list.slice(i, i + size), vocabulary, type, fixture, titles }, random);
      i += size;
    }
  }
}
