/**
 * The words the generated catalog is made of: per category, its brands and its product types,
 * each type with the adjectives that make its titles, the option its variants differ by, and the
 * features its descriptions mention. Fictional brands; ordinary shop words, so that a search has
 * something real to find ("ergonomic office chair", "cordless drill", "organic coffee beans").
 */

import { APPAREL } from './vocabulary/apparel.ts';
import { AUTOMOTIVE } from './vocabulary/automotive.ts';
import { BEAUTY } from './vocabulary/beauty.ts';
import { BOOKS } from './vocabulary/books.ts';
import { ELECTRONICS } from './vocabulary/electronics.ts';
import { GARDEN } from './vocabulary/garden.ts';
import { GROCERY } from './vocabulary/grocery.ts';
import { HOME } from './vocabulary/home.ts';
import { OFFICE } from './vocabulary/office.ts';
import { SPORTS } from './vocabulary/sports.ts';
import { TOOLS } from './vocabulary/tools.ts';
import { TOYS } from './vocabulary/toys.ts';
import type { CategoryVocabulary } from './vocabulary/types.ts';

export type { CategoryVocabulary, OptionKind, ProductType } from './vocabulary/types.ts';

/** Currencies the catalog prices in, the rate from USD, and the share of products priced in each. */
export const RATES: readonly (readonly [currency: string, rate: number, share: number])[] = [
  ['USD', 1, 1],
  ['EUR', 0.92, 1],
  ['GBP', 0.79, 0.8],
  ['CAD', 1.36, 0.5],
];

/** In this order: a GTIN carries its category's index here (products.ts), so the order is the catalog's. */
export const VOCABULARY: readonly CategoryVocabulary[] = [
  ELECTRONICS,
  TOYS,
  TOOLS,
  BOOKS,
  APPAREL,
  GROCERY,
  HOME,
  GARDEN,
  SPORTS,
  BEAUTY,
  OFFICE,
  AUTOMOTIVE,
];

/**
 * Product line names that tell apart products of one brand, adjective and type (products.ts):
 * fictional, and words no category uses, so a search for shop words finds what it found before.
 */
export const SERIES: readonly string[] = [
  'Aria',
  'Vista',
  'Orion',
  'Sierra',
  'Cascade',
  'Meridian',
  'Juniper',
  'Halcyon',
  'Zephyr',
  'Solstice',
  'Equinox',
  'Tempo',
  'Cadence',
  'Horizon',
  'Lyra',
  'Vega',
  'Altair',
  'Sirius',
  'Polaris',
  'Cirrus',
  'Nimbus',
  'Apex',
  'Crest',
  'Quasar',
];
