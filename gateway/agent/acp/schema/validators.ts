import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { CHECKED_SCHEMAS } from '../../../../lib/json/checked-schemas.ts';
import { type AcpDocuments, readAcpDocuments } from './files.ts';
import { type AcpSide, bundleAliases, loadedCopy } from './quirks.ts';
import { type AcpViolation, acpViolations } from './violations.ts';

/** The definitions of the checkout bundle this merchant validates against. */
export type AcpDef =
  | 'CheckoutSessionCreateRequest'
  | 'CheckoutSessionUpdateRequest'
  | 'CheckoutSessionCompleteRequest'
  | 'CancelSessionRequest'
  | 'CheckoutSession'
  | 'CheckoutSessionWithOrder'
  | 'Error'
  | 'DiscoveryResponse'
  | 'Order'
  | 'Item'
  | 'LineItem'
  | 'Capabilities'
  | 'PaymentData'
  | 'AuthenticationResult'
  | 'IntentTrace'
  | 'MessageError'
  | 'DiscountsRequest'
  | 'DiscountsResponse';

/** A compiled validator: the document's violations, `[]` when it is valid. */
export type AcpValidate = (value: unknown) => readonly AcpViolation[];

/** The formats the bundle uses, all checked (ajv-formats, full mode); any other fails compilation. */
export const ACP_FORMATS = ['date-time', 'email', 'uri'] as const;

const VALID: readonly AcpViolation[] = Object.freeze([]);

let released: AcpDocuments | undefined;
const instances = new Map<AcpSide, { ajv: Ajv2020; bundleId: string }>();
const compiled = new Map<string, AcpValidate>();

function instance(side: AcpSide): { ajv: Ajv2020; bundleId: string } {
  const known = instances.get(side);
  if (known) return known;
  released ??= readAcpDocuments();
  const docs = loadedCopy(released, side);
  // Strict: a keyword Ajv does not know fails compilation, except `example`, which the bundle
  // uses everywhere as an annotation. Every violation is reported, never coerced.
  const ajv = new Ajv2020({
    ...CHECKED_SCHEMAS,
    allErrors: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    coerceTypes: false,
    keywords: ['example'],
  });
  addFormats.default(ajv, [...ACP_FORMATS]);
  ajv.addSchema(docs.extension);
  ajv.addSchema(docs.checkout);
  for (const alias of bundleAliases(docs)) ajv.addSchema(docs.checkout, alias);
  ajv.addSchema(docs.discount);
  ajv.addSchema(docs.cart);
  const made = { ajv, bundleId: docs.checkout.$id };
  instances.set(side, made);
  return made;
}

/** The validator of any definition of a loaded schema file (`$id` or the checkout bundle). */
export function acpDefValidator(side: AcpSide, def: string, schemaId?: string): AcpValidate {
  const key = `${side} ${schemaId ?? ''}#${def}`;
  const known = compiled.get(key);
  if (known) return known;
  const { ajv, bundleId } = instance(side);
  const check: ValidateFunction | undefined = ajv.getSchema(`${schemaId ?? bundleId}#/$defs/${def}`);
  if (!check) throw new Error(`ACP schema: no definition ${def} in ${schemaId ?? bundleId}`);
  const validate: AcpValidate = (value) => (check(value) ? VALID : acpViolations(check.errors ?? [], value));
  compiled.set(key, validate);
  return validate;
}

/** The Cart API's definitions (schema.cart.json). */
export type AcpCartDef = 'Cart' | 'CartCreateRequest' | 'CartUpdateRequest';

/** The cart schema's `$id`: its definitions are looked up there, not in the checkout bundle. */
export const ACP_CART_SCHEMA_ID = 'https://example.com/schemas/cart/bundle.schema.json';

/** A cart request (`side` request: Item with this merchant's tolerated quantity) or the Cart (tests). */
export function acpCartValidator(side: AcpSide, def: AcpCartDef): AcpValidate {
  return acpDefValidator(side, def, ACP_CART_SCHEMA_ID);
}

/** Requests: the released bundle, its quirks fixed, plus this merchant's tolerated `Item.quantity`. */
export function acpRequestValidator(def: AcpDef): AcpValidate {
  return acpDefValidator('request', def);
}

/** Responses (tests): the released bundle, its quirks fixed, no extensions. */
export function acpResponseValidator(def: AcpDef): AcpValidate {
  return acpDefValidator('response', def);
}
