/**
 * Which class each edge route is shed in, and the error body its protocol answers with
 * (gateway/shed-routes.ts): a table over the routes, each answer built as the route would send it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { edgeShedRoute } from '../../gateway/shed-routes.ts';

const request = (method: string, url: string) =>
  ({ method, url, routeOptions: { url } }) as unknown as FastifyRequest;
const reply = () => ({ type: () => undefined }) as unknown as FastifyReply;

describe('edgeShedRoute', () => {
  it.each([
    ['POST', '/api/v2/procurement/orders', 'order', 'type'],
    ['POST', '/v2/orders', 'order', 'type'],
    ['POST', '/mcp', 'order', 'jsonrpc'],
    ['POST', '/acp/checkout_sessions/:id/complete', 'order', 'code'],
    ['POST', '/ucp/checkout-sessions/:id/complete', 'order', 'content'],
    ['POST', '/ucp/checkout-sessions', 'quote', 'content'],
    ['POST', '/ucp/catalog/search', 'quote', 'content'],
    ['POST', '/ucp/catalog/lookup', 'quote', 'content'],
    ['POST', '/ucp/catalog/product', 'quote', 'content'],
    ['GET', '/v2/products', 'quote', 'type'],
    ['POST', '/graphql', 'quote', 'errors'],
    ['POST', '/v1/prices/calculate', 'quote', 'error'],
  ])('%s %s: %s, answered with a body holding %s', (method, url, klass, member) => {
    const route = edgeShedRoute(request(method, url));
    expect(route?.class).toBe(klass);
    expect(route?.answer(reply(), 1)).toHaveProperty(member);
  });

  it.each(['/healthz', '/readyz', '/metrics', '/api/v2/operator/agents', '/internal/orders'])(
    'never sheds %s',
    (url) => {
      expect(edgeShedRoute(request('GET', url))).toBeUndefined();
    },
  );
});
