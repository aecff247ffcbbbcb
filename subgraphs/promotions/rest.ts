import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { hasAnyRole } from '../../lib/auth/caller.ts';
import type { CallerVerifier } from '../../lib/auth/jwt.ts';
import { GATEWAY_SECRET_HEADER, sameSecret } from '../../lib/auth/shared-secret.ts';
import { callerOf } from '../../lib/graphql/caller-context.ts';
import { parseStrictJson } from '../../lib/json/strict-json.ts';
import { Problem, sendProblem } from '../../lib/problem.ts';
import type { PricedBasket, RedemptionRequest, ReleaseRequest } from './api.ts';
import { BasketInvalid, PromotionNotFound, RedemptionInvalid } from './domain/errors.ts';
import type { PromotionEngine } from './service.ts';

/** Roles that may record redemptions (the same as the GraphQL mutation's @requiresRole). */
export const REDEEM_ROLES = ['promotions:redeem', 'promotions:admin'];

/** Domain errors → problem details, in one place. */
function problemOf(err: unknown): Problem | undefined {
  if (err instanceof BasketInvalid || err instanceof RedemptionInvalid)
    return new Problem(422, 'validation', 'Unprocessable Content', err.message, { errors: err.errors });
  if (err instanceof PromotionNotFound)
    return new Problem(404, 'promotion-not-found', 'Not Found', err.message, {
      promotionId: err.promotionId,
    });
  if (err instanceof Problem) return err;
  const status = (err as { statusCode?: number }).statusCode;
  if (status === 415)
    return new Problem(415, 'unsupported-media-type', 'Unsupported Media Type', 'send application/json');
  if (status === 413)
    return new Problem(413, 'payload-too-large', 'Content Too Large', 'the body is too large');
  if (status !== undefined && status >= 400 && status < 500)
    return new Problem(400, 'malformed-request', 'Bad Request', (err as Error).message);
  return undefined;
}

/**
 * The REST face of the promotions module (schemas/openapi/promotions.yaml). Thin: parse,
 * call the service, map the result; the service validates against the same document.
 */
export function promotionsRoutes(
  engine: PromotionEngine,
  verifier: CallerVerifier,
  gatewaySecret?: string,
): FastifyPluginAsync {
  return async (app) => {
    app.setErrorHandler((err, req, reply) => {
      const problem = problemOf(err);
      if (problem) return sendProblem(reply, problem, req.url);
      req.log.error({ err }, 'promotions request failed');
      return sendProblem(
        reply,
        new Problem(500, 'internal', 'Internal Server Error', 'unexpected failure'),
        req.url,
      );
    });

    // The strict parser keeps each number's text, so amounts are read exactly as written
    // (domain/basket.ts); it also refuses duplicate keys instead of keeping the last one.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
      const r = parseStrictJson(body as string);
      if (r.ok) done(null, r.value);
      else done(Object.assign(new Error(`the body is not valid JSON: ${r.reason}`), { statusCode: 400 }));
    });

    // Fastify also parses text/plain; this contract speaks JSON only.
    app.addHook('preValidation', async (req) => {
      const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
      if (type !== 'application/json')
        throw new Problem(415, 'unsupported-media-type', 'Unsupported Media Type', 'send application/json');
    });

    app.post('/v1/promotions/evaluate', { bodyLimit: 262_144 }, async (req) =>
      engine.evaluate(req.body as PricedBasket),
    );

    app.post(
      '/v1/promotions/redemptions',
      { bodyLimit: 16_384 },
      async (req: FastifyRequest, reply: FastifyReply) => {
        await requireRole(req, verifier, gatewaySecret);
        const result = await engine.redeem(req.body as RedemptionRequest);
        if (result.status === 'LIMIT_REACHED')
          throw new Problem(
            409,
            'redemption-limit-reached',
            'Conflict',
            `the redemption limit of ${result.limitReached.join(', ')} is reached for this customer; nothing was consumed`,
            { promotionIds: result.limitReached },
          );
        return reply.code(result.status === 'REDEEMED' ? 201 : 200).send(result);
      },
    );

    app.post('/v1/promotions/redemptions/release', { bodyLimit: 16_384 }, async (req: FastifyRequest) => {
      await requireRole(req, verifier, gatewaySecret);
      return engine.release(req.body as ReleaseRequest);
    });
  };
}

/**
 * A caller with a redeeming role, or the gateway itself (its shared secret, as every subgraph
 * takes it): the checkout completion records a session's redemptions for the agent it serves.
 */
async function requireRole(
  req: FastifyRequest,
  verifier: CallerVerifier,
  gatewaySecret?: string,
): Promise<void> {
  const presented = req.headers[GATEWAY_SECRET_HEADER];
  if (gatewaySecret && typeof presented === 'string' && sameSecret(presented, gatewaySecret)) return;
  let caller: Awaited<ReturnType<typeof callerOf>>['caller'];
  try {
    caller = (await callerOf(req, verifier)).caller;
  } catch (err) {
    throw new Problem(
      401,
      'unauthenticated',
      'Unauthorized',
      (err as Error).message,
      {},
      { 'www-authenticate': 'Bearer' },
    );
  }
  if (!caller.authenticated)
    throw new Problem(
      401,
      'unauthenticated',
      'Unauthorized',
      'a bearer token is required',
      {},
      {
        'www-authenticate': 'Bearer',
      },
    );
  if (!hasAnyRole(caller, REDEEM_ROLES))
    throw new Problem(403, 'forbidden', 'Forbidden', `requires one of the roles: ${REDEEM_ROLES.join(', ')}`);
}
