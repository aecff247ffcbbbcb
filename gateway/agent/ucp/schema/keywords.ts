import type { KeywordDefinition } from 'ajv';

/**
 * UCP's own keywords (docs/documentation/schema-authoring.md at the tag, and the ucp-schema
 * resolver): annotations to Ajv, which never validates with them. Each value is still checked
 * against the shape the authoring guide gives, so a misspelt operation or visibility fails
 * compilation instead of being ignored. What they mean for requests is applied before Ajv
 * sees the schemas (./views.ts).
 */

/** The request operations `ucp_request` may name. */
export const UCP_OPERATIONS = ['create', 'update', 'complete'] as const;
export type UcpOperation = (typeof UCP_OPERATIONS)[number];

/** What `ucp_request` may say about a field. */
export const UCP_VISIBILITIES = ['omit', 'optional', 'required'] as const;
export type UcpVisibility = (typeof UCP_VISIBILITIES)[number];

const visibility = { enum: [...UCP_VISIBILITIES] };

export const UCP_KEYWORDS: readonly KeywordDefinition[] = [
  // Reverse-domain registry key of a capability schema (`dev.ucp.shopping.checkout`).
  { keyword: 'name', metaSchema: { type: 'string', pattern: '^[a-z][a-z0-9]*(?:\\.[a-z][a-z0-9_]*)+$' } },
  // A field's visibility in requests: for every operation, or per operation.
  {
    keyword: 'ucp_request',
    metaSchema: {
      anyOf: [
        visibility,
        {
          type: 'object',
          propertyNames: { enum: [...UCP_OPERATIONS] },
          additionalProperties: visibility,
        },
      ],
    },
  },
  // A field a response never carries (TokenCredential.token).
  { keyword: 'ucp_response', metaSchema: { enum: ['omit'] } },
  // On a type's root: one request shape for every operation (the generator uses `create`'s).
  { keyword: 'ucp_shared_request', metaSchema: { type: 'boolean' } },
  // fulfillment.json's Embedded Checkout Protocol methods (OpenRPC-like), not a schema.
  { keyword: 'embedded', metaSchema: { type: 'object' } },
];
