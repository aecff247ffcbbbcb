import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { CallerVerifier } from '../../../lib/auth/jwt.ts';
import { Problem, sendProblem } from '../../../lib/problem.ts';
import type { CartInput, QuoteTokens } from '../../../lib/quote-token/index.ts';
import { requireVerifier } from './caller.ts';
import { type EdgeContract, edgeContract, type Violation, violations } from './contract.ts';
import type { QuoteService } from './service.ts';

const VERIFY_BODY_LIMIT = 64 * 1024;
const JSON_MEDIA = /^application\/json\s*(;|$)/i;

const invalid = (what: string, errors: Violation[]) =>
  new Problem(
    422,
    'validation-error',
    'Request does not match the contract',
    `${what}: ${errors.length} violation(s)`,
    {
      errors,
    },
  );

interface QuoteQuery {
  line: string[];
  currency: string;
  region: string;
  customerSegment?: string;
  customerId?: string;
  coupon?: string[];
}

/** The cart of a validated query; a SKU given twice is refused (one line per SKU). */
export function cartOfQuery(q: QuoteQuery): CartInput {
  const seen = new Map<string, number>();
  const repeats: Violation[] = [];
  const lines = q.line.map((text, i) => {
    const colon = text.indexOf(':');
    const sku = text.slice(0, colon);
    const first = seen.get(sku);
    if (first !== undefined) {
      repeats.push({ pointer: `/line/${i}`, message: `repeats ${sku} (line ${first}); give each SKU once` });
    }
    seen.set(sku, i);
    return { sku, quantity: Number(text.slice(colon + 1)) };
  });
  if (repeats.length > 0) throw invalid('query', repeats);
  return {
    lines,
    currency: q.currency,
    region: q.region,
    ...(q.customerSegment !== undefined ? { customerSegment: q.customerSegment } : {}),
    ...(q.customerId !== undefined ? { customerId: q.customerId } : {}),
    ...(q.coupon !== undefined ? { coupons: q.coupon } : {}),
  };
}

function problemOf(err: FastifyError | Problem, req: FastifyRequest): Problem {
  if (err instanceof Problem) return err;
  const status = err.statusCode ?? 500;
  if (status === 415)
    return new Problem(415, 'unsupported-media-type', 'Unsupported media type', 'send application/json');
  if (status === 413) return new Problem(413, 'payload-too-large', 'Payload too large', err.message);
  if (status >= 400 && status < 500)
    return new Problem(400, 'malformed-request', 'Malformed request', err.message);
  req.log.error({ err, traceId: req.traceId }, 'edge request failed');
  return new Problem(500, 'internal', 'Internal error', 'unexpected failure');
}

/**
 * The edge's quote routes: GET /cart/quote, POST /cart/quote/verify (payment's check) and
 * GET /.well-known/jwks.json (public). Inputs are checked against schemas/openapi/edge.yaml; every error
 * is RFC 9457 problem+json.
 */
export const quoteRoutes =
  (
    service: QuoteService,
    tokens: QuoteTokens,
    callers: CallerVerifier,
    contract: EdgeContract = edgeContract(),
  ): FastifyPluginAsync =>
  async (app) => {
    app.setErrorHandler((err: FastifyError | Problem, req, reply: FastifyReply) =>
      sendProblem(reply, problemOf(err, req), req.url),
    );

    app.get('/cart/quote', async (req, reply) => {
      // The parsed query has no prototype; Ajv coerces it in place (a lone `line` becomes an array).
      const query = { ...(req.query as Record<string, unknown>) };
      if (!contract.quoteQuery(query)) throw invalid('query', violations(contract.quoteQuery.errors));
      const quote = await service.quote(cartOfQuery(query as unknown as QuoteQuery));
      return reply.header('cache-control', 'no-store').send(quote);
    });

    app.post('/cart/quote/verify', { bodyLimit: VERIFY_BODY_LIMIT }, async (req, reply) => {
      await requireVerifier(req, callers);
      // Fastify also parses text/plain; this endpoint speaks JSON only.
      if (!JSON_MEDIA.test(req.headers['content-type'] ?? '')) {
        throw new Problem(415, 'unsupported-media-type', 'Unsupported media type', 'send application/json');
      }
      if (!contract.verifyBody(req.body)) throw invalid('body', violations(contract.verifyBody.errors));
      const { token, cart } = req.body as { token: string; cart: CartInput };
      const result = await tokens.verify(token, cart);
      return reply.header('cache-control', 'no-store').send(result);
    });

    app.get('/.well-known/jwks.json', async (_req, reply) =>
      // Short enough that verifiers see a rotation quickly; they also refetch on an unknown kid.
      reply.header('cache-control', 'public, max-age=60').send(tokens.keys.jwks()),
    );
  };
