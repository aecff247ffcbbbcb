import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DemandCode, errorBody } from './codes.ts';

/**
 * The /graphql route's body errors, answered GraphQL-shaped so a GraphQL client reads them like
 * any other refusal:
 * - too large: Fastify refuses a larger body from its Content-Length before reading it (or stops
 *   reading a chunked one at the limit), so no parser ever sees it. 413 REQUEST_TOO_LARGE.
 * - not JSON: Fastify's JSON parser (secure-json-parse) also refuses a body that holds a
 *   `__proto__` or `constructor.prototype` key, and reports both the same way. 400 BAD_REQUEST,
 *   Apollo Server's code for a request it cannot read.
 * Other errors keep the app's handling.
 */
export function bodyLimitRoute(limit: number, refused: (code: DemandCode) => void) {
  return {
    bodyLimit: limit,
    errorHandler(error: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
      if (error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') {
        return reply
          .code(400)
          .type('application/json; charset=utf-8')
          .send({ errors: [{ message: NOT_JSON, extensions: { code: 'BAD_REQUEST' } }] });
      }
      if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
      refused(DemandCode.REQUEST_TOO_LARGE);
      return reply
        .code(413)
        .type('application/json; charset=utf-8')
        .send(errorBody(DemandCode.REQUEST_TOO_LARGE, `The request body is larger than ${limit} bytes.`));
    },
  };
}

export const NOT_JSON =
  'The request body is not a JSON object, or it holds a "__proto__" or "constructor.prototype" key, which is refused.';
