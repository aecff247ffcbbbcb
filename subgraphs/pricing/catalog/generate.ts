/**
 * A realistic, deterministic catalog: the same CATALOG_SIZE always yields the same products and
 * prices, so every process of a topology and every test run agrees on them. SKUs follow the
 * spec's `^SKU-[A-Z]{3}-\d{6}$`; the three letters name the category (promotions match on it).
 */

export interface GeneratedProduct {
  sku: string;
  name: string;
  category: string;
  inventoryLevel: number;
  /** Decimal text by currency, 2 decimals; a product is not priced in every currency. */
  prices: Record<string, string>;
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

/** Currencies and their rate from USD; GBP and CAD are missing for some products on purpose. */
const RATES: [currency: string, rate: number, share: number][] = [
  ['USD', 1, 1],
  ['EUR', 0.92, 1],
  ['GBP', 0.79, 0.8],
  ['CAD', 1.36, 0.5],
];

/**
 * Two fixed products first: the foundation's stub SKUs, which other areas' fixtures name.
 * `SKU-ABC-000001` at 19.99 USD is also the spec's rounding example (× 1.15 = 22.99).
 */
const ANCHORS: GeneratedProduct[] = [
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

/** mulberry32: a tiny seeded PRNG, so the catalog is reproducible without a dependency. */
function prng(seed: number): () => number {
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
function shelfPriceCents(random: () => number, min: number, max: number): number {
  // Log-uniform: many cheap items, few expensive ones.
  const dollars = Math.floor(Math.exp(Math.log(min) + random() * (Math.log(max) - Math.log(min))));
  const ending = [99, 49, 0][Math.floor(random() * 3)] ?? 99;
  return Math.max(1, dollars) * 100 + ending;
}

const centsText = (cents: number): string =>
  `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/** Inventory: mostly moderate stock, some scarce (< 10) and some overstocked (> 500). */
function inventory(random: () => number): number {
  const r = random();
  if (r < 0.1) return Math.floor(random() * 10);
  if (r < 0.8) return 10 + Math.floor(random() * 491);
  return 501 + Math.floor(random() * 2500);
}

export function generateCatalog(size: number, seed = 20260101): GeneratedProduct[] {
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
      name: `${adjective} ${noun} ${100 + (n % 900)}`,
      category: category.name,
      inventoryLevel: inventory(random),
      prices,
    });
  }
  return out;
}

export const CATALOG_CATEGORIES: readonly string[] = CATEGORIES.map((c) => c.name);
export const CATALOG_CURRENCIES: readonly string[] = RATES.map(([c]) => c);
