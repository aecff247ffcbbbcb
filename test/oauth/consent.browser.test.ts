/**
 * The consent page in Chromium, as a buyer administrator meets it: the platform sends the browser
 * to the authorization endpoint, the page asks for the console's sign-in, shows the platform and
 * the scopes in words, the administrator picks the agent identity and presses Link, and the
 * browser lands on the platform's loopback redirect with a code and iss.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pkcePair } from '../../harness/oauth-platform.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { issueKey } from '../acp/support/acp.ts';
import { releaseChromium, workerChromium } from '../support/console.ts';

const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/browser-buyer';

let sys: TestSystem;
let browser: Browser;
let callback: Server;
let redirectUri: string;
let clientId: string;
const arrived: URL[] = [];

beforeAll(async () => {
  sys = await startEmbedded();
  browser = await workerChromium();
  callback = createServer((req, res) => {
    arrived.push(new URL(req.url ?? '/', 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/plain' }).end('linked');
  });
  await new Promise<void>((ok) => callback.listen(0, '127.0.0.1', ok));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/cb`;
  await issueKey(sys, { spiffeId: SPIFFE, scopes: ['orders:create', 'orders:read'] });
  const admin = await sys.token(['agents:admin'], 'buyer-admin');
  const policy = await sys.gql('mutation ($i: SpendPolicyInput!) { setSpendPolicy(input: $i) { subject } }', {
    token: await sys.token(['spend:admin'], 'finance'),
    variables: {
      i: { subject: SPIFFE, currency: 'USD', period: 'MONTH', budget: '5000.00', approvalAbove: '250.00' },
    },
  });
  expect(policy.errors).toBeUndefined();
  const reg = await sys.gql(
    'mutation ($i: RegisterOAuthClientInput!) { registerOAuthClient(input: $i) { clientId } }',
    // Registered without the port: a loopback redirect matches on any port (RFC 8252 §7.3).
    {
      token: admin,
      variables: {
        i: {
          name: 'Shopping assistant',
          redirectUris: ['http://127.0.0.1/cb'],
          ucpProfile: 'https://platform.example',
        },
      },
    },
  );
  clientId = (reg.data as { registerOAuthClient: { clientId: string } }).registerOAuthClient.clientId;
}, 60_000);

afterAll(async () => {
  await releaseChromium(browser);
  await new Promise((ok) => callback?.close(ok));
  await sys?.close();
});

describe('the consent page', () => {
  it('signs the administrator in, shows the platform and scopes, and links the chosen identity', async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    const q = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      scope: 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read',
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      state: 'browser-state',
    });
    await page.goto(`${sys.url}/oauth/authorize?${q}`);
    await page.getByLabel('Bearer token').fill(await sys.token(['agents:admin'], 'buyer-admin'));
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Shopping assistant').waitFor();
    expect(await page.locator('#scopes li').allTextContents()).toEqual([
      expect.stringContaining('dev.ucp.shopping.checkout:manage'),
      expect.stringContaining('dev.ucp.shopping.order:read'),
    ]);
    // The identity with the spend policy its orders will be under.
    await page.getByText('Spend policy: $5000.00 a month, approval above $250.00').waitFor();
    await page.getByRole('radio', { name: new RegExp(SPIFFE) }).check();
    await page.getByRole('button', { name: 'Link' }).click();
    await page.waitForURL((u) => u.pathname === '/cb');
    const at = arrived.filter((u) => u.pathname === '/cb').at(-1);
    expect(at?.searchParams.get('code'), at?.href).toBeTruthy();
    expect(at?.searchParams.get('state')).toBe('browser-state');
    expect(at?.searchParams.get('iss')).toBe(`http://${sys.config.HOST}:${sys.config.PORT}`);
    expect(errors).toEqual([]);
    await page.close();
  });
});
