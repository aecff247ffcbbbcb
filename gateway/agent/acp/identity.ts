import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SpiffeId } from '../../../lib/auth/spiffe.ts';
import type { Rehearsals } from '../../../lib/http/rehearsal.ts';
import type { Logger } from '../../../lib/logger.ts';
import type { CheckoutApiKey } from '../../../subgraphs/procurement/api-keys/types.ts';
import type { ApiKeyVerifier } from '../identity/api-key.ts';
import { WARM_UP_AGENT, WARM_UP_AGENT_PATH, warmUpAgentId, warmUpIdentity } from '../rehearsal.ts';
import { ORDER_CREATE_SCOPE, type ScopePolicy } from '../scope/policy.ts';
import { freshState } from '../state.ts';
import { acpError, sendAcpError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The checkout API key an ACP call came with (its platform's webhook, its agent id). */
    acpKey?: CheckoutApiKey;
  }
}

/**
 * The warm-up's checkout rehearsals (issue 48) act as the reserved identity with this key, which
 * exists nowhere but here: only a request carrying this process's warm-up token gets it.
 */
function warmUpKey(trustDomain: string): { id: SpiffeId; key: CheckoutApiKey } {
  const spiffeId = warmUpAgentId(trustDomain);
  return {
    id: warmUpIdentity(trustDomain),
    key: {
      id: 'ak_warmup00000000000000000000',
      name: 'warm-up',
      spiffeId,
      agentId: WARM_UP_AGENT,
      scopes: [ORDER_CREATE_SCOPE],
      createdAt: 0,
      createdBy: 'warm-up',
      revokedAt: null,
      revokedBy: null,
      webhook: null,
      ucpProfile: null,
    },
  };
}

/**
 * Step 1 for ACP (onRequest): `Authorization: Bearer <key>`. The key is bound to one agent
 * identity (a SPIFFE ID) and its scopes, so every later step of the agent chain (scope, block,
 * rate limit, spend, approval, audit) treats the call as that identity's. Missing, unknown or
 * revoked: 401. With `rehearsals`: the warm-up's own calls (this process's token while it
 * runs) rehearse as the reserved identity (gateway/agent/rehearsal.ts), and a key bound to that
 * identity is refused (401), as /v2 refuses it without the token.
 */
export function acpIdentityStep(
  keys: ApiKeyVerifier,
  log: Logger,
  rehearsals?: { readonly of: Rehearsals['of']; readonly trustDomain: string },
) {
  const warmUp = rehearsals ? warmUpKey(rehearsals.trustDomain) : undefined;
  return async function identity(req: FastifyRequest, reply: FastifyReply) {
    req.agent ??= freshState();
    if (warmUp && rehearsals?.of(req)) {
      req.agent.identity = warmUp.id;
      req.agent.identitySource = 'api-key';
      req.agent.rehearsal = true;
      req.acpKey = warmUp.key;
      return;
    }
    const v = await keys.verify(req.headers.authorization);
    if (v.ok && v.id.path === WARM_UP_AGENT_PATH) {
      req.agent.reason = 'identity: reserved for the warm-up';
      return sendAcpError(
        reply,
        acpError(
          401,
          'invalid_api_key',
          'Authorization failed: this identity is reserved for the warm-up.',
          undefined,
          {
            'www-authenticate': 'Bearer',
          },
        ),
      );
    }
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
