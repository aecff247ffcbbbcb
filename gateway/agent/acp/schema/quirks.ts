import type { AcpDocuments, JsonSchema, SchemaDocument } from './files.ts';

/**
 * The released bundle's quirks, fixed in the loaded copy (never in the vendored files): each
 * fix is listed and explained in schemas/acp/<version>/README.md, "Quirks and how they are
 * handled". A fix first checks that the schema still has the shape it fixes, so a new release
 * that changes it fails at compilation instead of being silently patched wrong.
 */

/** Which side of the exchange a validator judges. */
export type AcpSide = 'request' | 'response';

/** The merchant's bound on `Item.quantity` in requests (the tolerated extension). */
export const MAX_ITEM_QUANTITY = 10_000;

function expectShape(ok: boolean, what: string): void {
  if (!ok) throw new Error(`ACP schema: the bundle no longer has the quirk this fix expects (${what})`);
}

const isObject = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

function def(doc: SchemaDocument, name: string): JsonSchema {
  const d = doc.$defs[name];
  expectShape(d !== undefined, `${doc.$id} has $defs/${name}`);
  return d as JsonSchema;
}

function properties(schema: JsonSchema, where: string): JsonSchema {
  const p = schema.properties;
  expectShape(isObject(p), `${where} has properties`);
  return p as JsonSchema;
}

/**
 * Capabilities.extensions is `oneOf [array of strings, array of ExtensionDeclaration]`: an
 * empty array is both, so `oneOf` refuses `[]`. The branches differ only in their items, so
 * `anyOf` accepts exactly the arrays the authors meant.
 */
export function acceptEmptyExtensions(docs: AcpDocuments): void {
  const extensions = properties(def(docs.checkout, 'Capabilities'), 'Capabilities').extensions;
  expectShape(
    isObject(extensions) && Array.isArray(extensions.oneOf) && extensions.oneOf.length === 2,
    'Capabilities.extensions is a oneOf of two arrays',
  );
  const e = extensions as JsonSchema;
  e.anyOf = e.oneOf;
  delete e.oneOf;
}

/**
 * The tolerated extension (requests only): the released Item has no `quantity` and refuses
 * unknown fields, yet the RFC's examples and the changelog send one. This merchant accepts a
 * whole number of units from 1 to MAX_ITEM_QUANTITY. Responses never carry it in `item`
 * (LineItem has its own `quantity`).
 */
export function tolerateItemQuantity(docs: AcpDocuments): void {
  const item = def(docs.checkout, 'Item');
  const props = properties(item, 'Item');
  expectShape(props.quantity === undefined && item.additionalProperties === false, 'Item has no quantity');
  props.quantity = {
    type: 'integer',
    minimum: 1,
    maximum: MAX_ITEM_QUANTITY,
    description: 'Number of units (this merchant: a whole number from 1 to 10000)',
  };
}

/** The fixes every loaded copy gets (the standard is clearly wrong). */
const BUNDLE_FIXES: readonly ((docs: AcpDocuments) => void)[] = [acceptEmptyExtensions];

/** A copy of the released documents with the fixes of `side` applied; `released` is untouched. */
export function loadedCopy(released: AcpDocuments, side: AcpSide): AcpDocuments {
  const docs = structuredClone(released);
  for (const fix of BUNDLE_FIXES) fix(docs);
  if (side === 'request') tolerateItemQuantity(docs);
  return docs;
}

/**
 * The discount schema refers to the bundle as `schema.agentic_checkout.json`, relative to its
 * own `$id` (https://agentic-commerce-protocol.com/schemas/discount.json), but the bundle's `$id`
 * is https://example.com/schemas/agentic-checkout/bundle.schema.json: the bundle is also
 * registered under the URI that reference resolves to.
 */
export function bundleAliases(docs: AcpDocuments): string[] {
  return [
    new URL('schema.agentic_checkout.json', docs.discount.$id).href,
    // The cart schema does the same from https://example.com/schemas/cart/bundle.schema.json.
    new URL('schema.agentic_checkout.json', docs.cart.$id).href,
  ];
}
