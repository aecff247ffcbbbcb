/** The shape of the catalog's words (seed/vocabulary.ts): a category, its product types, their options. */

/** How the variants of a product differ: each value one variant, in this order. */
export interface OptionKind {
  readonly name: string;
  readonly values: readonly string[];
  /** Price steps by value index (× the first variant's price): sizes cost more, colours do not. */
  readonly steps?: readonly number[];
}

export interface ProductType {
  /** The noun phrase of the title: "Mesh Office Chair". */
  readonly name: string;
  /** The second taxonomy level: "Chairs" (the first is the category's). */
  readonly shelf: string;
  readonly adjectives: readonly string[];
  readonly option: OptionKind;
  readonly features: readonly string[];
  readonly tags: readonly string[];
  /** What one costs, in US dollars, from and to. */
  readonly price: readonly [number, number];
}

export interface CategoryVocabulary {
  /** The SKU's category, as promotions match it. */
  readonly name: string;
  /** The description's last sentence. */
  readonly closing: string;
  /** The taxonomy's first level. */
  readonly title: string;
  readonly brands: readonly string[];
  readonly types: readonly ProductType[];
}
