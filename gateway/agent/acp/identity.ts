import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../../../lib/logger.ts';
import type { CheckoutApiKey } from '../../../subgraphs/procurement/api-keys/types.ts';
import type { ApiKeyVerifier } from '../identity/api-key.ts';
import type { ScopePolicy } from '../scope/policy.ts';
import { freshState } from '../state.ts';
import { acpError, sendAcpError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The checkout API key an ACP call came with (its platform's webhook, its agent id). */
    acpKey?: CheckoutApiKey;
  }
}

/**
 * Step 1 for ACP (onRequest): `Authorization: Bearer <key>`. The key is bound to one agent
 * identity (a SPIFFE ID) and its scopes, so every later step of the agent chain (scope, block,
 * rate limit, spend, approval, audit) treats the call as that identity's. Missing, unknown or
 * revoked: 401.
 */
export function acpIdentityStep(keys: ApiKeyVerifier, log: Logger) {
  return async function identity(req: FastifyRequest, reply: FastifyReply) {
    req.agent ??= freshState();
    const v = await keys.verify(req.headers.authorization);
    if (v.ok) {
      req.agent.identity = v.id;
      req.agent.identitySource = 'api-key';
      req.acpKey = v.key;
      return;
    }
    req.agent.reason = `identity: ${v.reason}`;
    log.warn({ traceId: req.traceId, reason: v.reason }, 'ACP caller not authenticated');
    return sendAcpError(
      reply,
      acpError(401, 'invalid_api_key', `Authorization failed: ${v.reason}.`, undefined, {
        'www-authenticate': 'Bearer',
      }),
    );
  };
}

/**
 * Step 2 for ACP (onRequest): the key's scopes narrow what the scope policy grants its identity
 * (as a bearer token's do on /v2). Without `required`: 403.
 */
export function acpScopeStep(policy: ScopePolicy, required: string) {
  return async function authorize(req: FastifyRequest, reply: FastifyReply) {
    const id = req.agent.identity;
    const key = req.acpKey;
    if (!id || !key) return;
    if (key.scopes.includes(required) && policy.grants(id).has(required)) return;
    req.agent.reason = `scope: ${required} not granted`;
    return sendAcpError(
      reply,
      acpError(403, 'insufficient_scope', `This API key is not granted the scope ${required}.`, undefined, {
        'www-authenticate': `Bearer error="insufficient_scope", scope="${required}"`,
      }),
    );
  };
}
