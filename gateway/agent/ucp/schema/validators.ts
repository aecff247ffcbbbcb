import { Ajv2020, type AnySchema, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { CHECKED_SCHEMAS } from '../../../../lib/json/checked-schemas.ts';
import { type AcpViolation, acpViolations } from '../../acp/schema/violations.ts';
import { readUcpDocuments, type UcpDocument } from './files.ts';
import { UCP_KEYWORDS, type UcpOperation } from './keywords.ts';
import { referenceAliases, UCP_ID_BASE } from './quirks.ts';
import { documentView, type UcpView } from './views.ts';

/**
 * One way a UCP document fails its schema: the ACP shape (`param` is an RFC 9535 JSONPath such
 * as `$.line_items[0].quantity`, the form UCP's `Message.path` takes too).
 */
export type UcpViolation = AcpViolation;

/** A compiled validator: the document's violations, `[]` when it is valid. */
export type UcpValidate = (value: unknown) => readonly UcpViolation[];

const id = (path: string): string => `${UCP_ID_BASE}${path}`;
const checkoutOf = (extension: string): string =>
  `${id(`schemas/shopping/${extension}.json`)}#/$defs/dev.ucp.shopping.checkout`;
const PROFILE = 'https://ucp.dev/schemas/discovery/profile.json';

/**
 * The shapes this merchant reads and writes, each the schema (URI with its JSON pointer) of the
 * vendored release that defines it. Extensions compose onto checkout with `allOf`, as the
 * release's `$defs["dev.ucp.shopping.checkout"]` entries do.
 */
export const UCP_DEFS = {
  /** shopping/checkout.json: the checkout session (requests: create, update, complete). */
  checkout: id('schemas/shopping/checkout.json'),
  /** discount.json: checkout with `discounts` {codes, applied}. */
  checkout_with_discount: checkoutOf('discount'),
  /** fulfillment.json: checkout with `fulfillment` {methods, available_methods}. */
  checkout_with_fulfillment: checkoutOf('fulfillment'),
  /** Both extensions on checkout (what this merchant negotiates): their `allOf`. */
  checkout_with_discount_and_fulfillment: {
    allOf: [{ $ref: checkoutOf('discount') }, { $ref: checkoutOf('fulfillment') }],
  },
  /** shopping/cart.json: the cart (cart.md; requests: create, update). */
  cart: id('schemas/shopping/cart.json'),
  /** cart.json's checkout with `cart_id` (create only): cart-to-checkout conversion. */
  checkout_with_cart: `${id('schemas/shopping/cart.json')}#/$defs/checkout`,
  /**
   * Every checkout extension this merchant offers (the two above and buyer_consent.json's
   * `buyer.consent`): what a create or update is validated against. An extension the platform
   * did not negotiate is validated all the same (a field it defines is of its type or refused)
   * and then ignored by the route.
   */
  checkout_with_extensions: {
    allOf: [
      { $ref: checkoutOf('discount') },
      { $ref: checkoutOf('fulfillment') },
      { $ref: checkoutOf('buyer_consent') },
    ],
  },
  /** shopping/order.json: the order (GET /orders/{id}, and the body of an order event webhook). */
  order: id('schemas/shopping/order.json'),
  /** The platform's order capability config in its profile ({webhook_url}). */
  order_platform_config: `${id('schemas/shopping/order.json')}#/$defs/platform_schema`,
  /** types/error_response.json: a business outcome with no resource (HTTP 200, `ucp.status: error`). */
  error_response: id('schemas/shopping/types/error_response.json'),
  /** The business profile at /.well-known/ucp. */
  business_profile: `${PROFILE}#/$defs/business_profile`,
  /** A platform's profile, fetched from the URL its UCP-Agent header names. */
  platform_profile: `${PROFILE}#/$defs/platform_profile`,
  /** A public key of a profile's `signing_keys` (JWK). */
  signing_key: `${PROFILE}#/$defs/signing_key`,
  /** discount.json's `discounts` object alone. */
  discounts: `${id('schemas/shopping/discount.json')}#/$defs/discounts_object`,
  /** types/fulfillment.json: the `fulfillment` object alone. */
  fulfillment: id('schemas/shopping/types/fulfillment.json'),
  /** payment.json: checkout's `payment`. */
  payment: id('schemas/shopping/payment.json'),
  line_item: id('schemas/shopping/types/line_item.json'),
  totals: id('schemas/shopping/types/totals.json'),
  message: id('schemas/shopping/types/message.json'),
  /** catalog_search.json: the search request and response (catalog/search.md). */
  catalog_search_request: `${id('schemas/shopping/catalog_search.json')}#/$defs/search_request`,
  catalog_search_response: `${id('schemas/shopping/catalog_search.json')}#/$defs/search_response`,
  /** catalog_lookup.json: batch lookup and get product (catalog/lookup.md). */
  catalog_lookup_request: `${id('schemas/shopping/catalog_lookup.json')}#/$defs/lookup_request`,
  catalog_lookup_response: `${id('schemas/shopping/catalog_lookup.json')}#/$defs/lookup_response`,
  catalog_get_product_request: `${id('schemas/shopping/catalog_lookup.json')}#/$defs/get_product_request`,
  catalog_get_product_response: `${id('schemas/shopping/catalog_lookup.json')}#/$defs/get_product_response`,
} as const satisfies Record<string, string | AnySchema>;

/** The names of the shapes of UCP_DEFS. */
export type UcpDef = keyof typeof UCP_DEFS;

/** The formats the release uses, all checked (ajv-formats, full mode); any other fails compilation. */
export const UCP_FORMATS = ['date-time', 'uri'] as const;

const VALID: readonly UcpViolation[] = Object.freeze([]);

let released: readonly UcpDocument[] | undefined;
const instances = new Map<UcpView, Ajv2020>();
const compiled = new Map<string, UcpValidate>();

/** Every released schema file, as read from the vendored folder (cached). */
export function ucpDocuments(): readonly UcpDocument[] {
  released ??= readUcpDocuments();
  return released;
}

/** The Ajv instance of one view: every file registered by its `$id` (and the aliases of quirks.ts). */
export function ucpAjv(view: UcpView): Ajv2020 {
  const known = instances.get(view);
  if (known) return known;
  const docs = ucpDocuments().map((d) => documentView(d, view));
  // Strict, but for two lint checks the release's idioms trip without being wrong: allOf
  // branches with `properties`/`required` and no `type` (strictTypes), `anyOf` of `required`
  // lists (strictRequired). Every violation is reported, never coerced.
  const ajv = new Ajv2020({
    ...CHECKED_SCHEMAS,
    allErrors: true,
    strict: true,
    strictTypes: false,
    strictRequired: false,
    coerceTypes: false,
    keywords: [...UCP_KEYWORDS],
  });
  addFormats.default(ajv, [...UCP_FORMATS]);
  for (const doc of docs) ajv.addSchema(doc.schema);
  const byId = new Map(docs.map((d) => [d.schema.$id, d.schema]));
  for (const alias of referenceAliases(docs))
    ajv.addSchema(byId.get(alias.document.schema.$id) as AnySchema, alias.uri);
  instances.set(view, ajv);
  return ajv;
}

/** The validator of any schema (URI with pointer) or inline schema in one view. */
export function ucpSchemaValidator(view: UcpView, schema: string | AnySchema, key: string): UcpValidate {
  const cacheKey = `${view} ${key}`;
  const known = compiled.get(cacheKey);
  if (known) return known;
  const ajv = ucpAjv(view);
  const check: ValidateFunction | undefined =
    typeof schema === 'string' ? ajv.getSchema(schema) : ajv.compile(schema);
  if (!check) throw new Error(`UCP schema: no schema ${key}`);
  const validate: UcpValidate = (value) => (check(value) ? VALID : acpViolations(check.errors ?? [], value));
  compiled.set(cacheKey, validate);
  return validate;
}

/**
 * The validator of `def`. Responses (tests, and what this merchant sends) use the released
 * schemas without the fields marked `ucp_response: omit`; requests use the view of their
 * operation (create, update, complete: ./views.ts), e.g. a complete request needs only `payment`.
 */
export function ucpValidator(def: UcpDef, side: 'response'): UcpValidate;
export function ucpValidator(def: UcpDef, side: 'request', operation: UcpOperation): UcpValidate;
export function ucpValidator(
  def: UcpDef,
  side: 'request' | 'response',
  operation?: UcpOperation,
): UcpValidate {
  if (side === 'request' && operation === undefined)
    throw new Error(`UCP schema: a ${def} request names its operation`);
  const view: UcpView = side === 'response' ? 'response' : (operation as UcpOperation);
  return ucpSchemaValidator(view, UCP_DEFS[def], def);
}

/**
 * The validator of a catalog shape. The catalog schemas carry no `ucp_request`/`ucp_response`
 * annotations (every view reads them alike), so requests and responses both use the response
 * view.
 */
export function ucpCatalogValidator(def: UcpDef): UcpValidate {
  return ucpSchemaValidator('response', UCP_DEFS[def], def);
}
