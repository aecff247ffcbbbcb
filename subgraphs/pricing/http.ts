import { readFileSync } from 'node:fs';
import { Ajv, type ErrorObject } from 'ajv';
import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import { parse as parseYaml } from 'yaml';
import { NoBasePrice, UnknownSku } from './domain/errors.ts';
import type { PriceContext } from './domain/types.ts';
import type { PricingService } from './service.ts';

/** The request schema the route validates with: the one in the OpenAPI document (one source). */
export function priceContextSchema(): Record<string, unknown> {
  const doc = parseYaml(
    readFileSync(new URL('../../schemas/openapi/pricing.yaml', import.meta.url), 'utf8'),
  ) as {
    components: { schemas: { PriceContext: Record<string, unknown> } };
  };
  return doc.components.schemas.PriceContext;
}

/** Ajv without coercion: "12" is not a number here, whatever Fastify's default would do. */
const ajv = new Ajv({ allErrors: true, coerceTypes: false, removeAdditional: false, useDefaults: false });

const BODY_LIMIT = 4096;
const JSON_TYPE = 'application/json; charset=utf-8';

const pointerOf = (e: ErrorObject): string =>
  e.keyword === 'required'
    ? `${e.instancePath}/${(e.params as { missingProperty: string }).missingProperty}`
    : e.instancePath || '/';

const sendError = (reply: FastifyReply, status: number, body: Record<string, unknown>) =>
  reply.code(status).type(JSON_TYPE).send(body);

/**
 * POST /v1/prices/calculate. Success and the 500 are the spec's; the 4xx answers are ours (the
 * spec defines none), all with the same `{"error": "..."}` body, so no input ever crashes it.
 */
export const pricingRoutes =
  (service: PricingService): FastifyPluginAsync =>
  async (app) => {
    app.setValidatorCompiler(({ schema }) => ajv.compile(schema));

    app.setErrorHandler((err: FastifyError, req, reply) => {
      if (err.validation) {
        const errors = (err.validation as ErrorObject[]).map((e) => ({
          pointer: pointerOf(e),
          message: e.message ?? 'is invalid',
        }));
        const summary = errors.map((e) => `${e.pointer} ${e.message}`).join('; ');
        return sendError(reply, 422, { error: `the body is not a PriceContext: ${summary}`, errors });
      }
      if (err instanceof UnknownSku || err instanceof NoBasePrice) {
        return sendError(reply, 404, { error: err.message });
      }
      const status = err.statusCode ?? 500;
      if (status >= 400 && status < 500) {
        const message =
          err.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || err instanceof SyntaxError
            ? `the body is not valid JSON: ${err.message}`
            : err.message;
        return sendError(reply, status, { error: message });
      }
      req.log.error({ err, traceId: req.traceId }, 'price calculation failed');
      return sendError(reply, 500, { error: 'the price could not be calculated (unexpected failure)' });
    });

    app.post<{ Body: PriceContext }>(
      '/v1/prices/calculate',
      { schema: { body: priceContextSchema() }, bodyLimit: BODY_LIMIT },
      async (req, reply) => {
        const { sku, currency, region, customerSegment, inventoryLevel } = req.body;
        const result = await service.calculate({ sku, currency, region, customerSegment, inventoryLevel });
        // The stored serialisation is sent as is: a HIT is the stored response, byte for byte.
        return reply.code(200).header('x-cache', result.cache).type(JSON_TYPE).send(result.json);
      },
    );
  };
