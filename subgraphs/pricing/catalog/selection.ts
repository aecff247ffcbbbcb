/**
 * Option selection on a product page (UCP catalog lookup.md, "Option Selection"), pure: from what
 * the shopper has chosen so far, the effective selections (relaxed when no variant has them all),
 * the variants that match them (the featured one first), and for every option value whether a
 * variant with it exists and can be bought, given the other effective selections. Names and
 * values compare case-insensitively.
 */
import type { CatalogVariant, ProductOption } from './model.ts';

export interface Selection {
  readonly name: string;
  readonly value: string;
}

export interface SelectionResult<V extends CatalogVariant> {
  /** The effective selections, in the product's option order. */
  readonly selected: readonly Selection[];
  /** Variants that match them, the featured one first. */
  readonly variants: readonly V[];
  /** Every option value with its signals relative to the effective selections. */
  readonly options: readonly {
    readonly name: string;
    readonly values: readonly {
      readonly value: string;
      readonly available: boolean;
      readonly exists: boolean;
    }[];
  }[];
}

const key = (s: string) => s.trim().toLowerCase();

const optionValue = (v: CatalogVariant, name: string) =>
  v.options.find((o) => key(o.name) === key(name))?.value;

const matches = (v: CatalogVariant, selections: readonly Selection[]) =>
  selections.every((s) => key(optionValue(v, s.name) ?? '') === key(s.value));

/**
 * `variantSku`: the request named a variant, which is featured and whose options are the
 * selections (the request's are then ignored). Otherwise the request's selections (the first of
 * each name), relaxed from the end of `preferences` (then from the end of the selections) until
 * some variant matches; none given: the first variant's options.
 */
export function selectOptions<V extends CatalogVariant>(
  product: { readonly options: readonly ProductOption[]; readonly variants: readonly V[] },
  request: { selected?: readonly Selection[]; preferences?: readonly string[]; variantSku?: string },
): SelectionResult<V> {
  const byVariant = request.variantSku
    ? product.variants.find((v) => v.sku === request.variantSku)
    : undefined;
  let selected: Selection[];
  if (byVariant) selected = byVariant.options.map((o) => ({ name: o.name, value: o.value }));
  else if (request.selected && request.selected.length > 0) {
    const seen = new Set<string>();
    selected = request.selected.filter((s) => !seen.has(key(s.name)) && seen.add(key(s.name)));
    // Drop selections from the lowest priority on: the end of `preferences`, then the rest
    // (not named in preferences) from the end of the request.
    const priority = (s: Selection) => {
      const i = (request.preferences ?? []).findIndex((p) => key(p) === key(s.name));
      return i < 0 ? Number.POSITIVE_INFINITY : i;
    };
    while (selected.length > 0 && !product.variants.some((v) => matches(v, selected))) {
      let drop = selected.length - 1;
      for (let i = selected.length - 1; i >= 0; i--)
        if (priority(selected[i] as Selection) > priority(selected[drop] as Selection)) drop = i;
      selected = selected.filter((_, i) => i !== drop);
    }
  } else selected = (product.variants[0]?.options ?? []).map((o) => ({ name: o.name, value: o.value }));

  const matching = product.variants.filter((v) => matches(v, selected));
  const featured = byVariant ?? matching[0];
  const variants = featured ? [featured, ...matching.filter((v) => v !== featured)] : matching;
  const ordered = product.options
    .map((o) => selected.find((s) => key(s.name) === key(o.name)))
    .filter((s): s is Selection => s !== undefined);
  return {
    selected: ordered.length === selected.length ? ordered : selected,
    variants,
    options: product.options.map((o) => {
      const others = selected.filter((s) => key(s.name) !== key(o.name));
      return {
        name: o.name,
        values: o.values.map((value) => {
          const withIt = product.variants.filter((v) => matches(v, [...others, { name: o.name, value }]));
          return { value, exists: withIt.length > 0, available: withIt.some((v) => v.available) };
        }),
      };
    }),
  };
}
