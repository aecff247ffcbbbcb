/**
 * Oversized bodies on every route that takes one: 413, whether the size is announced
 * (Content-Length) or discovered while reading (chunked), never a 400, a 500 or a hang. The
 * routes are read from the running app, so a new POST route is covered without editing this.
 */
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { type ProfileServer, platformProfile, startProfileServer } from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';

/** Above every route's limit (the largest is Fastify's default, 1 MiB). */
const SIZE = 2 * 1024 * 1024 + 1;
const AGENT = 'spiffe://example.org/ns/ai/sa/procurement-agent';

let sys: TestSystem;
let profiles: ProfileServer;
let ucpProfile = '';
beforeAll(async () => {
  // UCP routes fetch the platform's profile before the body: one served on loopback.
  sys = await startEmbedded({ RATE_LIMIT_CAPACITY: '100000', UCP_PROFILE_ALLOW_INSECURE: 'true' });
  profiles = await startProfileServer();
  // Every UCP capability this system offers (one not negotiated answers 200
  // capabilities_incompatible before any body is read).
  ucpProfile = profiles.set(
    '/platform.json',
    platformProfile({
      capabilities: [
        'checkout',
        'order',
        'discount',
        'fulfillment',
        'cart',
        'catalog.search',
        'catalog.lookup',
      ],
    }),
  );
  operatorToken = await sys.token(['agents:admin']);
  // One platform per ACP request: each 413 counts towards its identity's block, as on /v2.
  for (let i = 0; i < 12; i++)
    checkoutKeys.push((await issueKey(sys, { spiffeId: `${AGENT}/oversized-acp-${i}` })).key);
  // Eight UCP routes (three of checkout, two of carts, three of the catalog), each sent to twice.
  for (let i = 0; i < 16; i++)
    ucpKeys.push((await issueKey(sys, { spiffeId: `${AGENT}/oversized-ucp-${i}`, ucpProfile })).key);
});
afterAll(async () => {
  await profiles?.close();
  await sys.close();
});

/** Full paths of the routes that accept POST, from Fastify's route tree. */
function postRoutes(tree: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^(.*?)(?:├── |└── )(\S+) \(([^)]*)\)/.exec(line);
    if (!m) continue;
    const depth = (m[1] as string).length / 4;
    stack.length = depth;
    stack.push(m[2] as string);
    if ((m[3] as string).split(', ').includes('POST')) out.push(stack.join(''));
  }
  return out;
}

const CANCEL_ROUTE = '/api/v2/procurement/orders/:id/cancel';
const AGENT_ROUTES = new Set(['/api/v2/procurement/orders', '/v2/orders', CANCEL_ROUTE, '/mcp']);
const OPERATOR_ROUTES = new Set(['/api/v2/operator/agents/unblock']);
/**
 * Routes that read their body as a stream of lines: no total limit (a feed of a million products
 * is gigabytes), but a line longer than the feed's limit is refused as too long without being held.
 */
const STREAMED_ROUTES = new Set(['/v1/catalog/imports/:importId/products']);
/** The ACP routes: a platform's checkout API key and the protocol version come before the body. */
const isAcp = (route: string) => route.startsWith('/acp/');
/** The UCP routes: UCP-Agent (its profile fetched) and the platform's key come before the body. */
const isUcp = (route: string) => route.startsWith('/ucp/');
/** The path to send to: a route's parameters filled with a well-formed value. */
const pathOf = (route: string) =>
  route.replace(':id', isAcp(route) || isUcp(route) ? `cs_${'0'.repeat(32)}` : `ord_${'0'.repeat(32)}`);
let operatorToken = '';
const checkoutKeys: string[] = [];
const ucpKeys: string[] = [];
const headers = (route: string): Record<string, string> => ({
  'content-type': 'application/json',
  // The agent and operator routes check who calls before the body: give them a caller, so the
  // size is what fails (anywhere else an agent identity is refused first: GraphQL is not for agents).
  ...(AGENT_ROUTES.has(route)
    ? {
        'x-spiffe-id': `${AGENT}/oversized-${route.replace(/\W/g, '')}-${Math.random().toString(36).slice(2, 8)}`,
      }
    : {}),
  ...(OPERATOR_ROUTES.has(route) ? { authorization: `Bearer ${operatorToken}` } : {}),
  ...(isAcp(route)
    ? {
        authorization: `Bearer ${checkoutKeys.pop()}`,
        'api-version': '2026-04-17',
        'idempotency-key': `big-${Math.random()}`,
      }
    : {}),
  ...(isUcp(route)
    ? {
        authorization: `Bearer ${ucpKeys.pop()}`,
        'ucp-agent': `profile="${ucpProfile}"`,
        'idempotency-key': `big-${Math.random()}`,
      }
    : {}),
});

describe('oversized bodies', () => {
  const routes = () => postRoutes(sys.app.printRoutes({ commonPrefix: false }));

  it('finds every POST route of the system', () => {
    expect(routes().sort()).toEqual(
      [
        '/acp/checkout_sessions',
        '/acp/checkout_sessions/:id',
        '/acp/checkout_sessions/:id/cancel',
        '/acp/checkout_sessions/:id/complete',
        '/acp/carts',
        '/acp/carts/:id/cancel',
        '/api/v2/operator/agents/unblock',
        '/api/v2/procurement/orders',
        CANCEL_ROUTE,
        '/cart/quote/verify',
        '/console/dev-token',
        '/console/link/:uid',
        '/oauth/token',
        '/oauth/revoke',
        '/graphql',
        '/mcp',
        '/v1/catalog/imports/:importId/products',
        '/v1/prices/calculate',
        '/v1/promotions/evaluate',
        '/v1/promotions/redemptions',
        '/v1/promotions/redemptions/release',
        '/v2/orders',
        '/ucp/checkout-sessions',
        '/ucp/checkout-sessions/:id/cancel',
        '/ucp/checkout-sessions/:id/complete',
        '/ucp/carts',
        '/ucp/carts/:id/cancel',
        '/ucp/catalog/search',
        '/ucp/catalog/lookup',
        '/ucp/catalog/product',
      ].sort(),
    );
  });

  /** The body whole (content-length) or as a stream of 64 KiB chunks (chunked). */
  const bodyOf = (big: Buffer, mode: 'content-length' | 'chunked') =>
    mode === 'chunked'
      ? Readable.from(
          (async function* () {
            for (let i = 0; i < big.length; i += 65_536) yield big.subarray(i, i + 65_536);
          })(),
        )
      : big;

  it.each(['content-length', 'chunked'] as const)(
    'answers 413 on every POST route (%s)',
    async (mode) => {
      const big = Buffer.alloc(SIZE, 0x20);
      const results: Record<string, number> = {};
      for (const route of routes().filter((r) => !STREAMED_ROUTES.has(r))) {
        const body = bodyOf(big, mode);
        try {
          const res = await request(`${sys.url}${pathOf(route)}`, {
            method: 'POST',
            headers: headers(route),
            body,
            headersTimeout: 10_000,
            bodyTimeout: 10_000,
          });
          await res.body.text();
          results[route] = res.statusCode;
        } catch (err) {
          // The server may answer 413 and close before the client finished sending: undici then
          // reports the write error although the answer arrived. Record it to see which routes.
          results[route] = -1;
          results[`${route} error`] = (err as { code?: string }).code as unknown as number;
        }
      }
      expect(results).toEqual(
        Object.fromEntries(routes().flatMap((r) => (STREAMED_ROUTES.has(r) ? [] : [[r, 413]]))),
      );
    },
    60_000,
  );

  it.each(['content-length', 'chunked'] as const)(
    'refuses a line of the streamed catalog upload that is longer than 128 KiB, not the body (%s)',
    async (mode) => {
      const admin = await sys.token(['catalog:admin']);
      const started = await sys.gql(
        `mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { id } }`,
        { token: admin, variables: { input: { mode: 'PARTIAL', metadata: { id: 'feed_big' } } } },
      );
      const id = (started.data?.startCatalogImport as { id: string } | undefined)?.id;
      const big = Buffer.alloc(SIZE, 0x61);
      const body = bodyOf(big, mode);
      const res = await request(`${sys.url}/v1/catalog/imports/${id}/products`, {
        method: 'POST',
        headers: { 'content-type': 'application/jsonl', authorization: `Bearer ${admin}` },
        body,
        headersTimeout: 10_000,
        bodyTimeout: 10_000,
      });
      expect(res.statusCode).toBe(200);
      expect(await res.body.json()).toMatchObject({
        linesRead: 1,
        accepted: 0,
        refused: 1,
        errors: [{ line: 1, path: '$', reason: expect.stringMatching(/longer than 128 KiB/) }],
      });
    },
    60_000,
  );
});
