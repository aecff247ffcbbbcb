import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DemandCode, errorBody } from './codes.ts';

/**
 * The /graphql route's body limit: Fastify refuses a larger body from its Content-Length before
 * reading it (or stops reading a chunked one at the limit), so no parser ever sees it. The
 * refusal is a GraphQL-shaped 413 for GraphQL clients; other errors keep the app's handling.
 */
export function bodyLimitRoute(limit: number, refused: (code: DemandCode) => void) {
  return {
    bodyLimit: limit,
    errorHandler(error: FastifyError, _req: FastifyRequest, reply: FastifyReply) {
      if (error.code !== 'FST_ERR_CTP_BODY_TOO_LARGE') throw error;
      refused(DemandCode.REQUEST_TOO_LARGE);
      return reply
        .code(413)
        .type('application/json; charset=utf-8')
        .send(errorBody(DemandCode.REQUEST_TOO_LARGE, `The request body is larger than ${limit} bytes.`));
    },
  };
}
