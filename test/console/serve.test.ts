/**
 * The gateway serves the console's built files at /console (issue 14): caching headers, the
 * single-page fallback, the Content-Security-Policy, and the development token only where it
 * may exist. A throwaway "built console" (index.html + one hashed asset) stands in for Vite's
 * output so these tests need no build; test/console/browser.test.ts runs the real one.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEV_OPERATOR_ROLES } from '../../gateway/console/dev-token.ts';
import { CONSOLE_CSP } from '../../gateway/console/index.ts';
import { buildDistributedGateway, type RunningSystem } from '../../gateway/topology.ts';
import { startEmbedded, type TestSystem, testConfig } from '../../harness/system.ts';

function fakeBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ac-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<!doctype html><title>console</title><script type="module" src="/console/assets/index-AbC123.js"></script>',
  );
  writeFileSync(join(dir, 'assets/index-AbC123.js'), 'console.log("app")\n');
  mkdirSync(join(dir, '.vite'));
  writeFileSync(join(dir, '.vite/manifest.json'), '{}');
  return dir;
}

describe('the gateway serves the built console at /console', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded({ CONSOLE_DIR: fakeBuild() });
  });
  afterAll(() => sys?.close());

  it('redirects /console to /console/ and answers index.html with no-cache and a strict CSP', async () => {
    const bare = await fetch(`${sys.url}/console`, { redirect: 'manual' });
    expect(bare.status).toBe(308);
    expect(bare.headers.get('location')).toBe('/console/');
    const res = await fetch(`${sys.url}/console/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(res.headers.get('cache-control')).toBe('no-cache');
    expect(res.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.text()).toContain('/console/assets/index-AbC123.js');
  });

  it('caches hashed assets for a year, immutable', async () => {
    const res = await fetch(`${sys.url}/console/assets/index-AbC123.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(await res.text()).toContain('console.log');
  });

  it.each(['/console/agents', '/console/orders?order=ORD-1', '/console/promotions/'])(
    'answers the client route %s with index.html (single-page fallback)',
    async (path) => {
      const res = await fetch(`${sys.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(await res.text()).toContain('<title>console</title>');
    },
  );

  it.each(['/console/assets/index-Old999.js', '/console/favicon.ico', '/console/.vite/manifest.json'])(
    'answers a missing or hidden file %s with a 404 problem, not the page',
    async (path) => {
      const res = await fetch(`${sys.url}${path}`);
      expect(res.status).toBe(404);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    },
  );

  it('refuses to serve files outside the console directory', async () => {
    for (const path of ['/console/..%2fpackage.json', '/console/assets/..%2f..%2fetc%2fpasswd']) {
      const res = await fetch(`${sys.url}${path}`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect(await res.text()).not.toMatch(/"name"|root:/);
    }
  });

  it('never answers a 5xx for any path under /console, nor serves a file from outside it', async () => {
    const segment = fc.oneof(
      fc.constantFrom('..', '.', '%2e%2e', '%2f', '%00', 'assets', 'index.html', '.vite', '%E0%A4%A', '~'),
      fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 5 }), async (parts) => {
        const res = await fetch(`${sys.url}/console/${parts.join('/')}`);
        const body = await res.text();
        expect(res.status).toBeLessThan(500);
        expect(body).not.toMatch(/"devDependencies"|root:x:0/);
      }),
      { numRuns: 150 },
    );
  });

  it('mints a development token whatever the request carries, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/xml',
        ),
        fc.string({ maxLength: 200 }),
        async (type, body) => {
          const res = await fetch(`${sys.url}/console/dev-token`, {
            method: 'POST',
            headers: { 'content-type': type },
            body,
          });
          expect(res.status).toBeLessThan(500);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('leaves the API outside /console without the console headers', async () => {
    const res = await fetch(`${sys.url}/healthz`);
    expect(res.headers.get('content-security-policy')).toBeNull();
  });

  it('tells the page that this embedded development gateway offers a development token and the explorer', async () => {
    const res = await fetch(`${sys.url}/console/config.json`);
    expect(await res.json()).toEqual({ devToken: true, explorer: true });
  });

  it('mints a development token with the operator roles that the API accepts', async () => {
    const res = await fetch(`${sys.url}/console/dev-token`, { method: 'POST' });
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = (await res.json()) as { token: string; roles: string[] };
    expect(body.roles).toEqual([...DEV_OPERATOR_ROLES]);
    const promos = await sys.gql('{ promotions { promotionId } }', { token: body.token });
    expect(promos.errors).toBeUndefined();
    expect(Array.isArray(promos.data?.promotions)).toBe(true);
    const anonymous = await sys.gql('{ promotions { promotionId } }');
    expect(anonymous.errors?.[0]?.extensions?.code).toMatch(/UNAUTHENTICATED|FORBIDDEN/);
  });
});

describe('the development token exists only in the embedded development default', () => {
  it('is absent with NODE_ENV=production', async () => {
    // Production requires an identity provider (AUTH_JWKS_URL) and a real gateway secret.
    const sys = await startEmbedded({
      NODE_ENV: 'production',
      AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json',
      GATEWAY_SHARED_SECRET: 'x'.repeat(40),
      CONSOLE_DIR: fakeBuild(),
    });
    try {
      const res = await fetch(`${sys.url}/console/dev-token`, { method: 'POST' });
      expect(res.status).toBe(404);
      expect(await (await fetch(`${sys.url}/console/config.json`)).json()).toEqual({
        devToken: false,
        explorer: false,
      });
      // The console itself is still served.
      expect((await fetch(`${sys.url}/console/`)).status).toBe(200);
    } finally {
      await sys.close();
    }
  });

  it('is absent when the embedded gateway verifies tokens against an identity provider', async () => {
    const sys = await startEmbedded({ AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json' });
    try {
      expect((await fetch(`${sys.url}/console/dev-token`, { method: 'POST' })).status).toBe(404);
    } finally {
      await sys.close();
    }
  });

  it('is absent in the distributed topology, whose gateway still serves the console', async () => {
    let gw: RunningSystem | undefined;
    try {
      gw = await buildDistributedGateway(testConfig({ CONSOLE_DIR: fakeBuild() }));
      const url = await gw.listen(0);
      expect((await fetch(`${url}/console/dev-token`, { method: 'POST' })).status).toBe(404);
      expect((await (await fetch(`${url}/console/config.json`)).json()) as object).toEqual({
        devToken: false,
        explorer: true,
      });
      const page = await fetch(`${url}/console/orders`);
      expect(page.status).toBe(200);
      expect(page.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    } finally {
      await gw?.close();
    }
  });

  it('can switch the explorer on in production by configuration', async () => {
    const sys = await startEmbedded({
      NODE_ENV: 'production',
      AUTH_JWKS_URL: 'http://127.0.0.1:9/jwks.json',
      GATEWAY_SHARED_SECRET: 'x'.repeat(40),
      CONSOLE_GRAPHQL_EXPLORER: 'true',
    });
    try {
      expect(await (await fetch(`${sys.url}/console/config.json`)).json()).toEqual({
        devToken: false,
        explorer: true,
      });
    } finally {
      await sys.close();
    }
  });
});

describe('without a built console', () => {
  it('serves no console files (the static-file plugin is not registered)', async () => {
    const sys = await startEmbedded({ CONSOLE_DIR: mkdtempSync(join(tmpdir(), 'ac-no-console-')) });
    try {
      expect((await fetch(`${sys.url}/console/`)).status).toBe(404);
      expect((await fetch(`${sys.url}/console/agents`)).status).toBe(404);
    } finally {
      await sys.close();
    }
  });
});
