/**
 * Issue 46, item 1: a web page that re-points its own name to 127.0.0.1 (DNS rebinding) is
 * same-origin with a development system in the browser of whoever runs it, and its requests come
 * from loopback. The probe minted an all-roles development token, issued a checkout API key with
 * it, and placed an order with any X-Spiffe-Id. Its requests carry the page's name in Host and
 * Origin, which the system now refuses on what trusts loopback (docs/console.md, "Hardening").
 * Requests go over a real socket with the Host a browser would send (node:http: fetch will not
 * let a caller set Host).
 */
import { request } from 'node:http';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { servedHosts } from '../../lib/http/served-hosts.ts';
import { AGENT } from '../procurement/support/agent.ts';

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

/** One request to `base` with exactly these headers (Host included). */
function send(base: string, method: string, path: string, headers: Record<string, string>, body?: string) {
  const { hostname, port } = new URL(base);
  return new Promise<Reply>((resolve, reject) => {
    const req = request({ hostname, port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: Record<string, unknown> = {};
        try {
          parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
        } catch {
          parsed = { raw: text };
        }
        resolve({ status: res.statusCode ?? 0, body: parsed });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const ORDER = JSON.stringify({
  agent_id: 'agent-0000001',
  sku: 'SKU-ABC-000001',
  quantity: 1,
  max_budget_usd: 10,
});
const ISSUE = `mutation ($input: IssueCheckoutApiKeyInput!) { issueCheckoutApiKey(input: $input) { key } }`;
const ISSUE_VARS = {
  input: {
    name: 'rebinding probe',
    spiffeId: `${AGENT}/rebinding`,
    agentId: 'agent-rebind-01',
    scopes: ['orders:create'],
  },
};

let sys: TestSystem;
let port: string;
const rebound = () => `rebind.attacker.example:${port}`;
const json = { 'content-type': 'application/json' };

beforeAll(async () => {
  // A public origin and one more served name, as a deployment behind a sidecar would set them.
  sys = await startEmbedded({
    PUBLIC_BASE_URL: 'https://commerce.example.com',
    SERVED_HOSTS: 'ops.internal',
  });
  port = new URL(sys.url).port;
});
afterAll(() => sys?.close());

describe('the development token', () => {
  it("refuses the probe: a rebound page's Host and Origin (403 host-not-served, no token)", async () => {
    const r = await send(sys.url, 'POST', '/console/dev-token', {
      host: rebound(),
      origin: `http://${rebound()}`,
    });
    expect(r.status).toBe(403);
    expect(r.body).toMatchObject({ type: expect.stringMatching(/host-not-served$/), status: 403 });
    expect(r.body.token).toBeUndefined();
  });

  it('refuses a page of another origin calling the loopback address (403 foreign-origin)', async () => {
    for (const origin of [`http://${rebound()}`, 'http://192.0.2.66:8080', 'null']) {
      const r = await send(sys.url, 'POST', '/console/dev-token', { host: `127.0.0.1:${port}`, origin });
      expect([origin, r.status, r.body.type]).toEqual([
        origin,
        403,
        expect.stringMatching(/foreign-origin$/),
      ]);
    }
  });

  it.each([
    ['the console on the loopback address', () => `127.0.0.1:${port}`, () => `http://127.0.0.1:${port}`],
    ['the console on localhost', () => `localhost:${port}`, () => `http://localhost:${port}`],
    ['the Vite dev server proxying to it', () => `localhost:${port}`, () => 'http://localhost:5173'],
    ['the configured public origin', () => 'commerce.example.com', () => 'https://commerce.example.com'],
    ['a name in SERVED_HOSTS', () => `ops.internal:${port}`, () => `http://ops.internal:${port}`],
    ['curl (no Origin)', () => `127.0.0.1:${port}`, () => undefined],
  ])('mints a token for %s', async (_what, host, origin) => {
    const o = origin();
    const r = await send(sys.url, 'POST', '/console/dev-token', {
      host: host(),
      ...(o ? { origin: o } : {}),
    });
    expect(r.status).toBe(200);
    expect(typeof r.body.token).toBe('string');
  });

  it('answers loopback peers only, whatever their Host (a gateway on 0.0.0.0 and its network)', async () => {
    for (const remoteAddress of ['192.0.2.7', '10.0.0.8', '::ffff:192.168.1.9', 'fe80::1']) {
      const r = await sys.app.inject({
        method: 'POST',
        url: '/console/dev-token',
        remoteAddress,
        headers: { host: `127.0.0.1:${port}` },
      });
      expect([remoteAddress, r.statusCode, r.json().type]).toEqual([
        remoteAddress,
        403,
        expect.stringMatching(/dev-token-loopback-only$/),
      ]);
    }
    for (const remoteAddress of ['127.0.0.1', '127.0.0.9', '::1', '::ffff:127.0.0.1']) {
      const r = await sys.app.inject({
        method: 'POST',
        url: '/console/dev-token',
        remoteAddress,
        headers: { host: `localhost:${port}` },
      });
      expect([remoteAddress, r.statusCode]).toEqual([remoteAddress, 200]);
    }
  });

  it('refuses any Host that names another site (fuzz)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc
          .domain()
          .filter(
            (d) =>
              !/(^|\.)localhost$/i.test(d) &&
              !['commerce.example.com', 'ops.internal'].includes(d.toLowerCase()),
          ),
        async (domain) => {
          const r = await send(sys.url, 'POST', '/console/dev-token', { host: `${domain}:${port}` });
          return r.status === 403 && r.body.token === undefined;
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('X-Spiffe-Id trusted from loopback', () => {
  it("refuses the probe's order: a rebound Host with any X-Spiffe-Id is 401, no order", async () => {
    const r = await send(
      sys.url,
      'POST',
      '/api/v2/procurement/orders',
      { ...json, host: rebound(), origin: `http://${rebound()}`, 'x-spiffe-id': AGENT },
      ORDER,
    );
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ type: expect.stringMatching(/unverified-workload-identity$/) });
    expect(String(r.body.detail)).toMatch(/Host/);
  });

  it.each([
    () => `127.0.0.1:${port}`,
    () => `localhost:${port}`,
    () => 'commerce.example.com',
    () => `ops.internal:${port}`,
  ])('still believes it for a served Host (%#)', async (host) => {
    const r = await send(
      sys.url,
      'POST',
      '/api/v2/procurement/orders',
      { ...json, host: host(), 'x-spiffe-id': `${AGENT}/served-host` },
      ORDER,
    );
    expect(r.status).toBe(201);
  });
});

describe('state-changing console calls from a page of another origin', () => {
  it('refuses a GraphQL mutation (issueCheckoutApiKey) with 403 FORBIDDEN, and no key is issued', async () => {
    const token = await sys.token(['agents:admin'], 'ops-rebind');
    const body = JSON.stringify({ query: ISSUE, variables: ISSUE_VARS });
    const auth = { ...json, authorization: `Bearer ${token}` };
    const foreign = await send(
      sys.url,
      'POST',
      '/graphql',
      { ...auth, host: rebound(), origin: `http://${rebound()}` },
      body,
    );
    expect(foreign.status).toBe(403);
    expect(foreign.body).toMatchObject({ errors: [{ extensions: { code: 'FORBIDDEN' } }] });
    expect(JSON.stringify(foreign.body)).not.toContain('acp_');
    // The console's own page (its Origin) issues the key; a query from a foreign page still runs.
    const own = await send(
      sys.url,
      'POST',
      '/graphql',
      { ...auth, host: `127.0.0.1:${port}`, origin: `http://127.0.0.1:${port}` },
      body,
    );
    expect(own.status).toBe(200);
    expect(JSON.stringify(own.body)).toContain('acp_');
    const query = await send(
      sys.url,
      'POST',
      '/graphql',
      { ...json, host: `127.0.0.1:${port}`, origin: 'https://storefront.example' },
      JSON.stringify({ query: '{ __typename }' }),
    );
    expect(query.status).toBe(200);
  });

  it('refuses an operator API POST (unblock) with 403 foreign-origin', async () => {
    const token = await sys.token(['agents:admin'], 'ops-rebind');
    const body = JSON.stringify({ spiffe_id: AGENT });
    const headers = { ...json, authorization: `Bearer ${token}`, host: `127.0.0.1:${port}` };
    const foreign = await send(
      sys.url,
      'POST',
      '/api/v2/operator/agents/unblock',
      { ...headers, origin: `http://${rebound()}` },
      body,
    );
    expect([foreign.status, foreign.body.type]).toEqual([403, expect.stringMatching(/foreign-origin$/)]);
    const own = await send(
      sys.url,
      'POST',
      '/api/v2/operator/agents/unblock',
      { ...headers, origin: `http://127.0.0.1:${port}` },
      body,
    );
    expect(own.status).toBe(200);
  });
});

describe('which Host and Origin headers name the system (pure)', () => {
  const served = servedHosts({
    SERVED_HOSTS: [],
    PUBLIC_BASE_URL: 'https://commerce.example.com',
    HOST: '127.0.0.1',
    PORT: 8080,
  });

  it.each([
    ['127.0.0.1:8080', true],
    ['127.8.9.10', true],
    ['[::1]:8080', true],
    ['192.0.2.10:8080', true],
    ['localhost:8080', true],
    ['LOCALHOST.', true],
    ['console.localhost', true],
    ['commerce.example.com', true],
    ['Commerce.Example.COM:443', true],
    ['rebind.attacker.example:8080', false],
    ['commerce.example.com.attacker.example', false],
    ['localhost.attacker.example', false],
    ['', false],
    [undefined, false],
    ['user@localhost', false],
    ['localhost/path', false],
    ['localhost:8080 evil.example', false],
    ['a b', false],
  ])('Host %s is served: %s', (host, expected) => {
    expect(served.host(host)).toBe(expected);
  });

  it.each([
    ['http://localhost:5173', '127.0.0.1:8080', true],
    ['http://127.0.0.1:8080', 'localhost:8080', true],
    ['https://commerce.example.com', 'commerce.example.com', true],
    ['http://192.0.2.10:8080', '192.0.2.10:8080', true],
    ['http://192.0.2.66:8080', '192.0.2.10:8080', false],
    ['http://rebind.attacker.example:8080', 'rebind.attacker.example:8080', false],
    ['null', '127.0.0.1:8080', false],
    ['file://', '127.0.0.1:8080', false],
    ['http://localhost:5173/path', '127.0.0.1:8080', false],
  ])('Origin %s with Host %s is served: %s', (origin, host, expected) => {
    expect(served.origin(origin, host)).toBe(expected);
  });

  it('never throws, and serves no other registrable name (fuzz)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), fc.string({ maxLength: 80 }), (a, b) => {
        served.host(a);
        served.origin(a, b);
        return true;
      }),
      { numRuns: 1000 },
    );
    fc.assert(
      fc.property(
        fc.domain().filter((d) => !/(^|\.)localhost$/i.test(d) && d.toLowerCase() !== 'commerce.example.com'),
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        (domain, p) => {
          const host = p === undefined ? domain : `${domain}:${p}`;
          return !served.host(host) && !served.origin(`http://${host}`, host);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
