/**
 * The catalog bench's labelled queries (issue 47): which products a query should find, judged
 * from how the deterministic seed built each product (its category, product type, adjective,
 * brand and option values: subgraphs/pricing/catalog/seed/), never by running a search, so the
 * labels favour no engine. Graded: 2 (what was asked for) and 1 (a near answer).
 *   tsx bench/catalog/labels.ts [size]   rewrites bench/catalog/relevance.json (size 10,000)
 */
import { writeFileSync } from 'node:fs';
import { generateProducts } from '../../subgraphs/pricing/catalog/generate.ts';
import type { CatalogProductInput } from '../../subgraphs/pricing/catalog/model.ts';
import {
  type CategoryVocabulary,
  type ProductType,
  VOCABULARY,
} from '../../subgraphs/pricing/catalog/seed/vocabulary.ts';

export interface LabelledQuery {
  id: string;
  kind: 'type' | 'words' | 'brand-attribute' | 'typo' | 'filters';
  query?: string;
  filters?: { categories?: string[]; brands?: string[]; options?: { name: string; values: string[] }[] };
  /** Product id → grade (2 or 1); the products not listed are not relevant. */
  relevant: Record<string, number>;
}

/** What the seed made a product of: its vocabulary, type, brand and adjective. */
interface Made {
  product: CatalogProductInput;
  vocabulary: CategoryVocabulary;
  type: ProductType;
  brand: string;
  adjective: string;
  values: string[];
}

function madeOf(products: readonly CatalogProductInput[]): Made[] {
  const out: Made[] = [];
  for (const product of products) {
    const vocabulary = VOCABULARY.find((v) => product.categories[0]?.startsWith(`${v.title} >`));
    const type = vocabulary?.types.find((t) => product.title.endsWith(` ${t.name}`));
    const brand = product.brand ?? '';
    if (!vocabulary || !type || !vocabulary.brands.includes(brand)) continue; // the two anchors
    // The adjective stands just before the type; a product line's name (seed/products.ts, SERIES)
    // may stand between it and the brand. The longest adjective that fits, should one end another.
    const adjective = type.adjectives
      .filter((a) => product.title.endsWith(` ${a} ${type.name}`))
      .reduce((best, a) => (a.length > best.length ? a : best), '');
    const values = product.variants.flatMap((v) => v.options.map((o) => o.value));
    out.push({ product, vocabulary, type, brand, adjective, values });
  }
  return out;
}

/** One typo, deterministically: two different letters in the middle of the longest word swapped. */
function typo(text: string): string {
  const words = text.split(' ');
  const longest = words.reduce((a, b) => (b.length > a.length ? b : a));
  let i = Math.floor(longest.length / 2) - 1;
  while (i > 0 && longest[i] === longest[i + 1]) i--;
  const swapped = `${longest.slice(0, i)}${longest[i + 1]}${longest[i]}${longest.slice(i + 2)}`;
  return words.map((w) => (w === longest ? swapped : w)).join(' ');
}

const graded = (made: Made[], grade: (m: Made) => number): Record<string, number> =>
  Object.fromEntries(made.map((m) => [m.product.productId, grade(m)]).filter(([, g]) => (g as number) > 0));

/** Five queries per category: a type, several words, brand plus attribute, a typo, filters only. */
function categoryQueries(made: Made[], v: CategoryVocabulary): LabelledQuery[] {
  const mine = made.filter((m) => m.vocabulary === v);
  const [t0, t1, t2, t3] = v.types as [ProductType, ProductType, ProductType, ProductType];
  const sameShelf = (t: ProductType) => (m: Made) => (m.type === t ? 2 : m.type.shelf === t.shelf ? 1 : 0);
  const adjective = t1.adjectives[0] as string;
  const brand = v.brands[0] as string;
  const value = t3.option.values[0] as string;
  const id = (kind: string) => `${v.name}-${kind}`;
  return [
    { id: id('type'), kind: 'type', query: t0.name.toLowerCase(), relevant: graded(mine, sameShelf(t0)) },
    {
      id: id('words'),
      kind: 'words',
      query: `${adjective} ${t1.name}`.toLowerCase(),
      relevant: graded(mine, (m) => (m.type === t1 ? (m.adjective === adjective ? 2 : 1) : 0)),
    },
    {
      id: id('brand-attribute'),
      kind: 'brand-attribute',
      query: `${brand} ${t3.name} ${value}`.toLowerCase(),
      relevant: graded(mine, (m) =>
        m.type === t3 && m.brand === brand ? (m.values.includes(value) ? 2 : 1) : 0,
      ),
    },
    {
      id: id('typo'),
      kind: 'typo',
      query: typo(t2.name.toLowerCase()),
      relevant: graded(mine, sameShelf(t2)),
    },
    {
      id: id('filters'),
      kind: 'filters',
      filters: { categories: [v.title], brands: [v.brands[1] as string] },
      relevant: graded(mine, (m) => (m.brand === v.brands[1] ? 1 : 0)),
    },
  ];
}

/** The issue's own examples, besides the generated ones. */
function namedQueries(made: Made[]): LabelledQuery[] {
  const chair = (m: Made) => m.type.name === 'Mesh Office Chair';
  return [
    {
      id: 'ergonomic-chair',
      kind: 'words',
      query: 'ergonomic chair',
      relevant: graded(made, (m) => (chair(m) ? (m.adjective === 'Ergonomic' ? 2 : 1) : 0)),
    },
    {
      id: 'ergonomic-chair-typo',
      kind: 'typo',
      query: 'ergnomic chair',
      relevant: graded(made, (m) => (chair(m) ? (m.adjective === 'Ergonomic' ? 2 : 1) : 0)),
    },
    {
      id: 'black-office-chair',
      kind: 'brand-attribute',
      query: 'black office chair',
      relevant: graded(made, (m) => (chair(m) ? (m.values.includes('Black') ? 2 : 1) : 0)),
    },
    {
      id: 'office-colour-filter',
      kind: 'filters',
      filters: { categories: ['Office > Chairs'], options: [{ name: 'Color', values: ['Green'] }] },
      relevant: graded(made, (m) => (chair(m) && m.values.includes('Green') ? 1 : 0)),
    },
  ];
}

/** The labelled set for the generated catalog of `size` SKUs. */
export function labelledQueries(size: number): LabelledQuery[] {
  const made = madeOf(generateProducts(size));
  return [...VOCABULARY.flatMap((v) => categoryQueries(made, v)), ...namedQueries(made)];
}

export const RELEVANCE_FILE = new URL('./relevance.json', import.meta.url);

if (import.meta.url === `file://${process.argv[1]}`) {
  const size = Number(process.argv[2] ?? 10_000);
  const set = labelledQueries(size);
  writeFileSync(RELEVANCE_FILE, `${JSON.stringify({ catalogSize: size, queries: set }, null, 1)}\n`);
  console.log(`${set.length} queries for the catalog of ${size} SKUs`);
}
