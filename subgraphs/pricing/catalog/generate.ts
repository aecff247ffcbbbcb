/**
 * A realistic, deterministic catalog: the same CATALOG_SIZE always yields the same products and
 * prices, so every process of a topology and every test run agrees on them. SKUs follow the
 * spec's `^SKU-[A-Z]{3}-\d{6}$`; the three letters name the category (promotions match on it).
 * Each SKU is a variant of a product (seed/products.ts: titles, brands, descriptions, options).
 */
import type { CatalogProductInput } from './model.ts';
import { centsText, groupIntoProducts, prng, productsOf, shelfPriceCents } from './seed/products.ts';
import { RATES } from './seed/vocabulary.ts';

export interface GeneratedProduct {
  sku: string;
  /** The variant's name: its product's title, and its option value when it has siblings. */
  name: string;
  category: string;
  inventoryLevel: number;
  /** Decimal text by currency, 2 decimals; a product is not priced in every currency. */
  prices: Record<string, string>;
  /** The product it is a variant of. */
  productId: string;
}

interface Category {
  name: string;
  code: string;
  nouns: string[];
  /** USD price range. */
  min: number;
  max: number;
}

const CATEGORIES: Category[] = [
  {
    name: 'electronics',
    code: 'ELC',
    nouns: ['Headphones', 'Charger', 'Speaker', 'Monitor', 'Keyboard'],
    min: 9,
    max: 1499,
  },
  { name: 'toys', code: 'TOY', nouns: ['Puzzle', 'Robot', 'Kite', 'Blocks', 'Doll'], min: 3, max: 149 },
  {
    name: 'tools',
    code: 'TOL',
    nouns: ['Drill', 'Wrench', 'Hammer', 'Saw', 'Screwdriver Set'],
    min: 5,
    max: 499,
  },
  {
    name: 'books',
    code: 'BOK',
    nouns: ['Novel', 'Cookbook', 'Atlas', 'Guide', 'Anthology'],
    min: 4,
    max: 89,
  },
  {
    name: 'apparel',
    code: 'APP',
    nouns: ['Jacket', 'T-Shirt', 'Scarf', 'Sneakers', 'Hoodie'],
    min: 7,
    max: 399,
  },
  {
    name: 'grocery',
    code: 'GRC',
    nouns: ['Coffee Beans', 'Olive Oil', 'Tea', 'Pasta', 'Honey'],
    min: 1,
    max: 59,
  },
  { name: 'home', code: 'HOM', nouns: ['Lamp', 'Blanket', 'Vase', 'Cushion', 'Clock'], min: 6, max: 899 },
  { name: 'garden', code: 'GRD', nouns: ['Hose', 'Planter', 'Shears', 'Seeds', 'Rake'], min: 2, max: 349 },
  {
    name: 'sports',
    code: 'SPT',
    nouns: ['Yoga Mat', 'Dumbbell', 'Ball', 'Racket', 'Helmet'],
    min: 5,
    max: 699,
  },
  {
    name: 'beauty',
    code: 'BTY',
    nouns: ['Serum', 'Lotion', 'Shampoo', 'Perfume', 'Brush'],
    min: 3,
    max: 199,
  },
  {
    name: 'office',
    code: 'OFC',
    nouns: ['Notebook', 'Pen Set', 'Stapler', 'Desk Organizer', 'Chair'],
    min: 1,
    max: 599,
  },
  {
    name: 'automotive',
    code: 'AUT',
    nouns: ['Wiper Blades', 'Floor Mats', 'Jump Starter', 'Car Wax', 'Dash Cam'],
    min: 8,
    max: 399,
  },
];

const ADJECTIVES = [
  'Classic',
  'Compact',
  'Deluxe',
  'Eco',
  'Pro',
  'Ultra',
  'Smart',
  'Travel',
  'Premium',
  'Essential',
];

/**
 * Two fixed products first: the foundation's stub SKUs, which other areas' fixtures name.
 * `SKU-ABC-000001` at 19.99 USD is also the spec's rounding example (× 1.15 = 22.99).
 */
const ANCHORS: Omit<GeneratedProduct, 'productId'>[] = [
  {
    sku: 'SKU-ABC-000001',
    name: 'Widget',
    category: 'tools',
    inventoryLevel: 50,
    prices: { USD: '19.99', EUR: '18.49', GBP: '15.99' },
  },
  {
    sku: 'SKU-ABC-000002',
    name: 'Gadget',
    category: 'toys',
    inventoryLevel: 5,
    prices: { USD: '5.00', EUR: '4.60' },
  },
];

/** Inventory: mostly moderate stock, some scarce (< 10) and some overstocked (> 500). */
function inventory(random: () => number): number {
  const r = random();
  if (r < 0.1) return Math.floor(random() * 10);
  if (r < 0.8) return 10 + Math.floor(random() * 491);
  return 501 + Math.floor(random() * 2500);
}

/** The SKUs with their first prices and stock (this file's stream; products.ts groups them). */
function skuRows(size: number, seed: number) {
  const random = prng(seed);
  const out = ANCHORS.slice(0, size).map((p) => ({ ...p, prices: { ...p.prices } }));
  const perCategory = new Map<string, number>();
  for (let i = out.length; i < size; i++) {
    const category = CATEGORIES[i % CATEGORIES.length] as Category;
    const n = (perCategory.get(category.code) ?? 0) + 1;
    perCategory.set(category.code, n);
    const usdCents = shelfPriceCents(random, category.min, category.max);
    const prices: Record<string, string> = {};
    for (const [currency, rate, share] of RATES) {
      if (random() >= share) continue;
      prices[currency] = centsText(Math.max(1, Math.round(usdCents * rate)));
    }
    const adjective = ADJECTIVES[Math.floor(random() * ADJECTIVES.length)];
    const noun = category.nouns[Math.floor(random() * category.nouns.length)];
    out.push({
      sku: `SKU-${category.code}-${String(n).padStart(6, '0')}`,
      // The names the stream once drew; products.ts names each variant now. The draws stay, so
      // every later SKU's price and stock stay what they were.
      name: `${adjective} ${noun} ${100 + (n % 900)}`,
      category: category.name,
      inventoryLevel: inventory(random),
      prices,
    });
  }
  return out;
}

const memo = new Map<string, CatalogProductInput[]>();

/** The catalog of `size` SKUs as products with their variants (memoised: tests ask often). */
export function generateProducts(size: number, seed = 20260101): CatalogProductInput[] {
  const key = `${size} ${seed}`;
  let products = memo.get(key);
  if (!products) {
    products = groupIntoProducts(skuRows(size, seed), Math.min(ANCHORS.length, size), seed);
    if (memo.size > 8) memo.clear();
    memo.set(key, products);
  }
  return products;
}

/**
 * generateProducts one product at a time, not memoised: the seed of a large catalog (a million
 * products) holds its SKU rows, never its products.
 */
export function streamProducts(size: number, seed = 20260101): Iterable<CatalogProductInput> {
  const known = memo.get(`${size} ${seed}`);
  return known ?? productsOf(skuRows(size, seed), Math.min(ANCHORS.length, size), seed);
}

/** Every SKU of the catalog, in SKU order of generation (the anchors first). */
export function generateCatalog(size: number, seed = 20260101): GeneratedProduct[] {
  const bySku = new Map(
    generateProducts(size, seed).flatMap((p) =>
      p.variants.map((v) => [
        v.sku,
        {
          sku: v.sku,
          name: v.name,
          category: v.category,
          inventoryLevel: v.inventoryLevel,
          prices: { ...v.prices },
          productId: p.productId,
        },
      ]),
    ),
  );
  return skuRows(size, seed).map((r) => bySku.get(r.sku) as GeneratedProduct);
}

export const CATALOG_CATEGORIES: readonly string[] = CATEGORIES.map((c) => c.name);
export const CATALOG_CURRENCIES: readonly string[] = RATES.map(([c]) => c);
