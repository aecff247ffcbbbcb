import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { CHECKED_SCHEMAS } from '../../../../lib/json/checked-schemas.ts';
import { formatJsonPath, pointerSegments } from '../../../../lib/json/json-path.ts';

/**
 * ACP's product feed as vendored (schemas/acp/2026-04-17/json-schema/schema.feed.json, release
 * 2026-04-17): the shapes a merchant's `metadata.json` and each line of its `products.jsonl`
 * must have, compiled once with Ajv 2020-12, strict, every format checked. `example` is an
 * annotation the bundle uses everywhere (as the checkout bundle does; schemas/acp README,
 * "Quirks").
 */
export const FEED_SCHEMA = new URL(
  '../../../../schemas/acp/2026-04-17/json-schema/schema.feed.json',
  import.meta.url,
);

export type FeedDef =
  | 'Product'
  | 'FeedMetadata'
  | 'CreateFeedRequest'
  | 'UpsertProductsRequest'
  | 'ProductsResponse';

/** Where and why a document fails: an RFC 9535 JSONPath into it, and a sentence. */
export interface FeedViolation {
  readonly path: string;
  readonly reason: string;
}

let ajv: Ajv2020 | undefined;
let bundleId = '';
const compiled = new Map<FeedDef, ValidateFunction>();

function instance(): Ajv2020 {
  if (ajv) return ajv;
  const bundle = JSON.parse(readFileSync(FEED_SCHEMA, 'utf8')) as { $id: string };
  bundleId = bundle.$id;
  ajv = new Ajv2020({
    ...CHECKED_SCHEMAS,
    allErrors: true,
    strict: true,
    coerceTypes: false,
    keywords: ['example'],
  });
  addFormats.default(ajv, ['uri', 'date-time']);
  ajv.addSchema(bundle);
  return ajv;
}

function reasonOf(e: ErrorObject): { extra?: string; reason: string } {
  const p = e.params as Record<string, unknown>;
  if (e.keyword === 'required') return { extra: String(p.missingProperty), reason: 'is required' };
  if (e.keyword === 'additionalProperties')
    return { extra: String(p.additionalProperty), reason: 'is not a field of the feed' };
  return { reason: e.message ?? `fails ${e.keyword}` };
}

/** The violations of `value` as `def`, most specific first; `[]` when it is valid. */
export function feedViolations(def: FeedDef, value: unknown): FeedViolation[] {
  let check = compiled.get(def);
  if (!check) {
    const a = instance();
    check = a.getSchema(`${bundleId}#/$defs/${def}`);
    if (!check) throw new Error(`schema.feed.json has no $defs/${def}`);
    compiled.set(def, check);
  }
  if (check(value)) return [];
  const seen = new Set<string>();
  const out: FeedViolation[] = [];
  for (const e of check.errors ?? []) {
    const { extra, reason } = reasonOf(e);
    const at = pointerSegments(e.instancePath, value);
    if (extra !== undefined) at.push(extra);
    const path = formatJsonPath(at);
    if (seen.has(`${path} ${reason}`)) continue;
    seen.add(`${path} ${reason}`);
    out.push({ path, reason });
  }
  // The deepest location first: it names the field at fault, not an object around it.
  return out.sort((a, b) => b.path.length - a.path.length);
}
