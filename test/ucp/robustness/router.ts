/**
 * The router under the UCP endpoint answers unknown paths, wrong methods and bad ids in UCP's
 * `{code, content}`; the rest of the server keeps its RFC 9457 problems: a part of
 * test/ucp/robustness.test.ts, on its system.
 */
import { describe, expect, it } from 'vitest';

export function routerTests(url: () => string): void {
  describe("the router under the UCP endpoint answers in UCP's shape; elsewhere the server keeps its own", () => {
    const raw = async (method: string, path: string) => {
      const res = await fetch(`${url()}${path}`, { method, signal: AbortSignal.timeout(15_000) });
      return {
        status: res.status,
        headers: res.headers,
        body: JSON.parse(await res.text()) as Record<string, unknown>,
      };
    };
    it.each([
      ['an unknown path', 'GET', '/ucp/nowhere', 404, 'not_found'],
      ['a path below a route', 'GET', '/ucp/checkout-sessions/cs_x/complete/more', 404, 'not_found'],
      ['the endpoint itself', 'GET', '/ucp', 404, 'not_found'],
      ['an id over 100 characters', 'GET', `/ucp/checkout-sessions/${'x'.repeat(101)}`, 414, 'uri_too_long'],
      ['an order id over 100 characters', 'GET', `/ucp/orders/${'o'.repeat(300)}`, 414, 'uri_too_long'],
      ['bad percent-encoding', 'GET', '/ucp/checkout-sessions/%zz', 400, 'malformed_request'],
      [
        'bad percent-encoding before a query',
        'POST',
        '/ucp/checkout-sessions/%E0%A4%A/cancel?x=1',
        400,
        'malformed_request',
      ],
    ])('%s: %s %s is %i %s', async (_what, method, path, status, code) => {
      const r = await raw(method, path);
      expect([r.status, r.body.code]).toEqual([status, code]);
      expect(r.body.content).toBeTypeOf('string');
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    });

    it.each([
      ['GET', '/ucp/checkout-sessions', 'POST'],
      ['DELETE', '/ucp/checkout-sessions/cs_x', 'GET, HEAD, PUT'],
      ['GET', '/ucp/checkout-sessions/cs_x/complete', 'POST'],
      ['PUT', '/ucp/orders/ord_x', 'GET, HEAD'],
    ])(
      'a route under another method: %s %s is 405 method_not_allowed with Allow: %s',
      async (method, path, allow) => {
        const r = await raw(method, path);
        expect([r.status, r.body.code]).toEqual([405, 'method_not_allowed']);
        expect(r.headers.get('allow')?.split(', ').sort().join(', ')).toBe(allow);
      },
    );

    it('leaves the rest of the server as it was: RFC 9457 problems for the router, its own 404', async () => {
      const long = await raw('GET', `/acp/checkout_sessions/${'x'.repeat(101)}`);
      expect(long.status).toBe(414);
      expect(long.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(long.body.type).toBe('https://agent-commerce.example/problems/uri-too-long');
      const bad = await raw('GET', '/acp/checkout_sessions/%zz');
      expect([bad.status, bad.body.type]).toEqual([
        400,
        'https://agent-commerce.example/problems/malformed-request',
      ]);
      // A path that only starts like the endpoint is not under it.
      const beside = await raw('GET', '/ucpx/checkout-sessions');
      expect(beside.status).toBe(404);
      expect(beside.body.code).not.toBe('not_found');
    });
  });
}
