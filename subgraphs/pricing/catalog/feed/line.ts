/**
 * One line of a merchant's `products.jsonl` (ACP product feed: one `Product` per line), read
 * and judged whole, purely: strict JSON (duplicate keys, `__proto__` and numbers no double can
 * hold are refused; lib/json/strict-json.ts), the vendored `Product` schema, and what the
 * schema leaves to the reader: an amount must be written as whole digits (1999, never 1.999e3
 * or 1999.0: minor units are counted, not measured), a variant id appears once in a product.
 * A refusal names the JSONPath at fault and why, for the per-line report.
 */
import { formatJsonPath } from '../../../../lib/json/json-path.ts';
import { numberLexeme, parseStrictJson } from '../../../../lib/json/strict-json.ts';
import { unstorableString } from '../../../../lib/json/well-formed.ts';
import { MAX_LINE_BYTES } from './lines.ts';
import { feedViolations } from './schema.ts';

/** An ACP feed Product as this code reads it (the schema has checked it). */
export interface FeedProduct {
  readonly id: string;
  readonly title?: string;
  readonly description?: { plain?: string; html?: string; markdown?: string };
  readonly url?: string;
  readonly media?: readonly FeedMedia[];
  readonly variants: readonly FeedVariant[];
}

export interface FeedMedia {
  readonly type: string;
  readonly url: string;
  readonly alt_text?: string;
  readonly width?: number;
  readonly height?: number;
}

export interface FeedPrice {
  readonly amount: number;
  readonly currency: string;
}

export interface FeedVariant {
  readonly id: string;
  readonly title: string;
  readonly description?: { plain?: string; html?: string; markdown?: string };
  readonly url?: string;
  readonly barcodes?: readonly { type: string; value: string }[];
  readonly price?: FeedPrice;
  readonly list_price?: FeedPrice;
  readonly availability?: { available?: boolean; status?: string };
  readonly categories?: readonly { value: string; taxonomy?: string }[];
  readonly condition?: readonly string[];
  readonly variant_options?: readonly { name: string; value: string }[];
  readonly media?: readonly FeedMedia[];
  readonly seller?: { name?: string };
  readonly marketplace?: { name?: string };
}

export { MAX_LINE_BYTES } from './lines.ts';

export type LineVerdict =
  | { readonly ok: true; readonly product: FeedProduct; readonly text: string }
  | { readonly ok: false; readonly path: string; readonly reason: string; readonly productId?: string };

const WHOLE = /^(0|[1-9]\d*)$/;

/** Amounts written otherwise than as whole digits, by JSONPath. */
function inexactAmounts(product: FeedProduct): { path: string; lexeme: string }[] {
  const out: { path: string; lexeme: string }[] = [];
  product.variants.forEach((v, i) => {
    for (const field of ['price', 'list_price', 'unit_price'] as const) {
      const container = (v as unknown as Record<string, unknown>)[field];
      const lexeme = numberLexeme(container, 'amount');
      if (lexeme !== undefined && !WHOLE.test(lexeme))
        out.push({ path: formatJsonPath(['variants', i, field, 'amount']), lexeme });
    }
  });
  return out;
}

export function judgeLine(text: string): LineVerdict {
  if (Buffer.byteLength(text, 'utf8') > MAX_LINE_BYTES)
    return { ok: false, path: '$', reason: `the line is longer than ${MAX_LINE_BYTES / 1024} KiB` };
  const parsed = parseStrictJson(text);
  if (!parsed.ok) return { ok: false, path: '$', reason: `not JSON: ${parsed.reason}` };
  const value = parsed.value;
  const productId =
    typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string'
      ? ((value as { id: string }).id as string)
      : undefined;
  const withId = productId !== undefined ? { productId } : {};
  const [first] = feedViolations('Product', value);
  if (first) return { ok: false, path: first.path, reason: first.reason, ...withId };
  // What PostgreSQL cannot store is refused here, as a line of its own, not at the commit midway.
  const bad = unstorableString(value, text);
  if (bad) return { ok: false, path: formatJsonPath(bad.segments), reason: bad.reason, ...withId };
  const product = value as FeedProduct;
  if (product.id.trim() === '' || product.id.length > 256)
    return { ok: false, path: '$.id', reason: 'must hold 1 to 256 characters', ...withId };
  if (product.variants.length === 0)
    return {
      ok: false,
      path: '$.variants',
      reason: 'a product needs at least one variant to be bought',
      ...withId,
    };
  const [inexact] = inexactAmounts(product);
  if (inexact)
    return {
      ok: false,
      path: inexact.path,
      reason: `must be a whole number of minor units written as digits, not ${inexact.lexeme.slice(0, 40)}`,
      ...withId,
    };
  const seen = new Map<string, number>();
  for (const [i, v] of product.variants.entries()) {
    if (v.id.trim() === '' || v.id.length > 256)
      return {
        ok: false,
        path: formatJsonPath(['variants', i, 'id']),
        reason: 'must hold 1 to 256 characters',
        ...withId,
      };
    const before = seen.get(v.id);
    if (before !== undefined)
      return {
        ok: false,
        path: formatJsonPath(['variants', i, 'id']),
        reason: `repeats the id of variants[${before}]`,
        ...withId,
      };
    seen.set(v.id, i);
  }
  return { ok: true, product, text };
}
