import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import { formatJsonPath, pointerSegments } from '../../../lib/json/json-path.ts';
import { UCP_VERSION } from './schema/index.ts';

/**
 * The purchase-order payment handler's published `spec` and `schema` (payment-handler-guide.md,
 * "Defining the Schema"): what a platform that knows only the specification reads to learn that
 * the instrument's credential must carry `purchase_order_number` (issue 50). Served by this
 * system (gateway/agent/ucp/index.ts) at the URLs the profile and every checkout give.
 *
 * The schema is self-contained for the shapes this handler defines (instrument, credential,
 * config); its three handler variants extend UCP's payment_handler.json by its `$id`, as the
 * guide's example does.
 */
export const HANDLER_PATH = '/payment-handlers/purchase_order';
export const handlerSchemaUrl = (origin: string): string => `${origin}${HANDLER_PATH}/schema.json`;
export const handlerSpecUrl = (origin: string): string => `${origin}${HANDLER_PATH}/spec.md`;

/** A purchase order number as ACP takes one: 1 to 100 characters, no control characters. */
const PO_NUMBER_PATTERN = '^[^\\p{Cc}]{1,100}$';

const credential = {
  title: 'Purchase Order Credential',
  description: "The buyer's own purchase order number; it becomes the order's client reference.",
  type: 'object',
  required: ['type', 'purchase_order_number'],
  properties: {
    type: { const: 'purchase_order' },
    purchase_order_number: { type: 'string', pattern: PO_NUMBER_PATTERN },
  },
};

const instrument = {
  title: 'Purchase Order Instrument',
  description: 'Payment on account: the selected instrument of a complete request.',
  type: 'object',
  required: ['id', 'handler_id', 'type', 'credential'],
  properties: {
    id: { type: 'string' },
    handler_id: { const: 'purchase_order' },
    type: { const: 'purchase_order' },
    selected: { type: 'boolean' },
    credential: { $ref: '#/$defs/purchase_order_credential' },
  },
};

const config = {
  title: 'Purchase Order Config',
  description: 'Which terms the account is invoiced on, and in which currency.',
  type: 'object',
  properties: {
    payment_terms: { type: 'string', examples: ['net_30'] },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  },
};

const variant = (name: 'business_schema' | 'response_schema', title: string) => ({
  title,
  allOf: [
    { $ref: `https://ucp.dev/schemas/payment_handler.json#/$defs/${name}` },
    { properties: { config: { $ref: '#/$defs/purchase_order_config' } } },
  ],
});

/** The handler schema for the handler named `name` (`<UCP_MERCHANT_NAMESPACE>.purchase_order`). */
export function purchaseOrderHandlerSchema(name: string, origin: string): Record<string, unknown> {
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    $id: handlerSchemaUrl(origin),
    title: 'Purchase Order Handler Schema',
    description: `Schema for the ${name} payment handler: payment on account with the buyer's purchase order number.`,
    name,
    version: UCP_VERSION,
    $defs: {
      purchase_order_credential: credential,
      purchase_order_instrument: instrument,
      purchase_order_config: config,
      [name]: {
        payment_instrument: { $ref: '#/$defs/purchase_order_instrument' },
        business_schema: variant('business_schema', 'Purchase Order (Business)'),
        response_schema: variant('response_schema', 'Purchase Order (Response)'),
      },
    },
  };
}

/** The instrument and credential alone (no external reference), compiled once. */
const validateInstrument = new Ajv2020({ allErrors: false, strict: false }).compile({
  $defs: { purchase_order_credential: credential },
  ...instrument,
});

/** Why the selected instrument is not this handler's (its first violation), or undefined. */
export function instrumentViolation(value: unknown): { path: string; content: string } | undefined {
  if (validateInstrument(value)) return undefined;
  const e = validateInstrument.errors?.[0] as ErrorObject;
  const at = pointerSegments(e.instancePath, value);
  if (e.keyword === 'required') at.push(String(e.params.missingProperty));
  // Relative to the instrument: the caller puts `$.payment.instruments[i]` before it.
  const path = formatJsonPath(at).slice(1);
  return {
    path,
    content:
      path === '.credential.purchase_order_number'
        ? 'A purchase order number of 1 to 100 characters is required.'
        : `The instrument does not match this handler's schema at ${path || 'its root'}: ${e.message ?? 'invalid'}.`,
  };
}

/** The handler's specification, served as text/markdown at handlerSpecUrl. */
export function purchaseOrderHandlerSpec(name: string, origin: string): string {
  return `# ${name}: payment on account (purchase order)

UCP version ${UCP_VERSION}. Schema: ${handlerSchemaUrl(origin)}

## Overview

The business takes payment on account: no card, no wallet, no payment provider. The buyer's
organisation is invoiced on the terms in the handler's \`config.payment_terms\` (for example
\`net_30\`), in \`config.currency\`. The platform passes the buyer's own purchase order number; it
becomes the order's client reference on the invoice.

## Participants

- **Business**: advertises the handler in \`/.well-known/ucp\` and in every checkout's
  \`payment.handlers\`, and invoices the account after the order is placed.
- **Platform**: selects one instrument of this handler in the complete request.

## Instrument

\`\`\`json
{"id": "po_1", "handler_id": "purchase_order", "type": "purchase_order", "selected": true,
 "credential": {"type": "purchase_order", "purchase_order_number": "PO-2026-0042"}}
\`\`\`

- \`handler_id\` is \`purchase_order\` (the handler's \`id\`), \`type\` is \`purchase_order\`.
- \`credential.purchase_order_number\` is required: 1 to 100 characters, no control characters.
- The instrument is valid against \`#/$defs/purchase_order_instrument\` of the schema; a complete
  request whose selected instrument is not is answered with the checkout and a
  \`payment_failed\` message at the offending path.

## Processing

Nothing is charged at completion: the order is placed on account and appears on the invoice.
There is no token, no redirect and no 3-D Secure step; \`purchase_order_number\` is not secret.
`;
}
