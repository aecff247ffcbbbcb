import { Ajv2020 } from 'ajv/dist/2020.js';
import { DEFAULT_AGENT_SCOPES } from '../../../lib/auth/agent-scopes.ts';
import { isProcurementAgent, parseSpiffeId } from '../../../lib/auth/spiffe.ts';
import { CHECKED_SCHEMAS } from '../../../lib/json/checked-schemas.ts';
import { hasLoneSurrogate } from '../../../lib/json/well-formed.ts';
import { freeText } from '../../../lib/text/free-text.ts';
import { componentSchema } from '../contract/openapi.ts';
import { ApiKeyInputInvalid } from './errors.ts';
import { parseProfileBinding } from './profile-binding.ts';
import type { CheckoutApiKeyInput } from './types.ts';

/** The scopes a key may carry: every scope the agent gateway knows (gateway/agent/scope/policy.ts). */
export const CHECKOUT_KEY_SCOPES: readonly string[] = DEFAULT_AGENT_SCOPES;
export const MAX_NAME = 100;

// The agent_id a key's orders carry must pass the /v2 contract, so it is checked with the
// contract's own schema (schemas/openapi/procurement.yaml), not a copy of its limits.
const agentIdSchema = (componentSchema('PurchaseOrderRequest') as { properties: Record<string, object> })
  .properties.agent_id;
const isContractAgentId = new Ajv2020({ ...CHECKED_SCHEMAS, strict: true }).compile(agentIdSchema as object);

function nameOf(raw: string): string {
  // A text column: node-postgres would send a lone surrogate as U+FFFD, storing another name than the one given.
  const name = freeText(raw, { max: MAX_NAME, required: true });
  if (!name.ok) throw new ApiKeyInputInvalid('name', `name ${name.reason}`);
  return name.text;
}

function spiffeIdOf(raw: string, trustDomains: readonly string[]): string {
  const id = parseSpiffeId(raw);
  if (!id.ok) throw new ApiKeyInputInvalid('spiffeId', `spiffeId is not a SPIFFE ID: ${id.reason}`);
  if (!isProcurementAgent(id.value, trustDomains))
    throw new ApiKeyInputInvalid(
      'spiffeId',
      `spiffeId must be the procurement agent (or below it) in a trusted domain (${trustDomains.join(', ')})`,
    );
  return id.value.id;
}

function agentIdOf(raw: string): string {
  // A lone surrogate is no Unicode text: the order parser refuses it in agent_id (I-JSON).
  if (!isContractAgentId(raw) || hasLoneSurrogate(raw))
    throw new ApiKeyInputInvalid(
      'agentId',
      'agentId must be an agent_id of the order contract (10 to 64 characters)',
    );
  return raw;
}

function scopesOf(raw: readonly string[]): string[] {
  if (raw.length === 0) throw new ApiKeyInputInvalid('scopes', 'scopes: name at least one scope');
  const unknown = raw.find((s) => !CHECKOUT_KEY_SCOPES.includes(s));
  if (unknown !== undefined)
    throw new ApiKeyInputInvalid(
      'scopes',
      `scopes: ${JSON.stringify(unknown.slice(0, 100))} is not one of ${CHECKOUT_KEY_SCOPES.join(', ')}`,
    );
  // Stored in the canonical order, once each.
  return CHECKOUT_KEY_SCOPES.filter((s) => raw.includes(s));
}

/** The input of a new key, normalised; throws ApiKeyInputInvalid naming the first bad field. Pure. */
export function parseKeyInput(
  input: CheckoutApiKeyInput,
  trustDomains: readonly string[],
  allowInsecureProfiles = false,
): CheckoutApiKeyInput & { ucpProfile: string | null } {
  const profile = input.ucpProfile?.trim();
  return {
    name: nameOf(input.name),
    spiffeId: spiffeIdOf(input.spiffeId, trustDomains),
    agentId: agentIdOf(input.agentId),
    scopes: scopesOf(input.scopes),
    ucpProfile: profile ? parseProfileBinding(profile, allowInsecureProfiles) : null,
  };
}
