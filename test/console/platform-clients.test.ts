/**
 * Registering an agent platform as an OAuth 2.0 client from the console's Agents page (issue 49),
 * in Chromium against the embedded system serving the console's real build: the operator fills
 * the form, reads the client_id the page shows, and that client then does what a platform does
 * with it (the code flow with PKCE, the token endpoint with `none` or `private_key_jwt`, a UCP
 * call with its access token). The API's refusals are shown in words on their field; an operator
 * without agents:admin gets no form, and the API refuses that operator anyway.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { form, link, platformKey } from '../../harness/oauth-platform.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../harness/ucp-platform.ts';
import { issueKey } from '../acp/support/acp.ts';
import { consoleCopy, releaseChromium, sidewaysScroll, signIn, workerChromium } from '../support/console.ts';

const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/console-registered';
const SCOPE = 'dev.ucp.shopping.checkout:manage';
const ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const CLIENTS =
  '{ oauthClients { clientId name tokenEndpointAuthMethod jwksUri ucpProfile redirectUris registeredBy } }';

let sys: TestSystem;
let browser: Browser;
let profiles: ProfileServer;
let profileUrl: string;
let admin: string;
let issuer: string;

beforeAll(async () => {
  sys = await startEmbedded({ CONSOLE_DIR: consoleCopy(), UCP_PROFILE_ALLOW_INSECURE: 'true' });
  browser = await workerChromium();
  profiles = await startProfileServer();
  profileUrl = profiles.set('/profile.json', platformProfile({ capabilities: ['checkout', 'order'] }));
  await issueKey(sys, {
    spiffeId: SPIFFE,
    scopes: ['orders:create', 'orders:read'],
    ucpProfile: profiles.origin,
  });
  admin = await sys.token(['agents:admin', 'agents:read'], 'ops-console');
  issuer = `http://${sys.config.HOST}:${sys.config.PORT}`;
}, 120_000);

afterAll(async () => {
  await releaseChromium(browser);
  await profiles?.close();
  await sys?.close();
});

async function agentsPage(token: string, viewport = { width: 1280, height: 900 }): Promise<Page> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  await signIn(page, sys.url, token);
  await page.getByRole('heading', { name: 'Platforms (OAuth 2.0 clients)' }).waitFor();
  return page;
}

const registerForm = (page: Page) =>
  page.getByRole('form', { name: 'Register a platform as an OAuth client' });

async function fill(
  page: Page,
  f: { name: string; redirectUris: string; ucpProfile: string; jwks?: string; jwksUri?: string },
): Promise<void> {
  const form = registerForm(page);
  await form.getByLabel('Platform name').fill(f.name);
  await form.getByLabel('Redirect URIs').fill(f.redirectUris);
  await form.getByLabel('UCP profile').fill(f.ucpProfile);
  if (f.jwks !== undefined || f.jwksUri !== undefined) {
    await form.getByRole('radio', { name: /^private_key_jwt/ }).check();
    if (f.jwks !== undefined) await form.getByLabel('JWK Set of the platform').fill(f.jwks);
    if (f.jwksUri !== undefined) await form.getByLabel('…or the URL of its JWK Set').fill(f.jwksUri);
  }
  await form.getByRole('button', { name: 'Register platform' }).click();
}

/** The client_id the page reports for the registration just made. */
async function shownClientId(page: Page): Promise<string> {
  const status = page.getByTestId('registered-client');
  await status.waitFor();
  const id = (await status.locator('code').textContent()) ?? '';
  expect(id).toMatch(/^pc_[0-9a-f]{24}$/);
  return id;
}

async function registered(): Promise<Record<string, unknown>[]> {
  const r = await sys.gql(CLIENTS, { token: admin });
  expect(r.errors).toBeUndefined();
  return (r.data as { oauthClients: Record<string, unknown>[] }).oauthClients;
}

/** The code of an authorization request by `clientId`, consented as SPIFFE. */
async function codeFor(clientId: string, redirectUri: string) {
  const r = await link({
    base: sys.url,
    clientId,
    redirectUri,
    scope: SCOPE,
    adminToken: admin,
    spiffeId: SPIFFE,
  });
  expect(r.location.searchParams.get('iss')).toBe(issuer);
  const code = r.location.searchParams.get('code');
  expect(code, r.location.href).toBeTruthy();
  return { code: code as string, verifier: r.verifier };
}

describe('registering a platform from the Agents page', { timeout: 90_000 }, () => {
  it('registers a public platform, shows its client_id and lists it; the client links an account and checks out', async () => {
    const page = await agentsPage(admin);
    await fill(page, {
      name: 'Console public app',
      redirectUris: 'http://127.0.0.1/callback',
      ucpProfile: profiles.origin,
    });
    const clientId = await shownClientId(page);
    await expect
      .poll(() => page.getByTestId('oauth-client').filter({ hasText: clientId }).textContent())
      .toContain('public: none, PKCE S256 only');
    expect((await registered()).find((c) => c.clientId === clientId)).toMatchObject({
      name: 'Console public app',
      tokenEndpointAuthMethod: 'none',
      redirectUris: ['http://127.0.0.1/callback'],
      ucpProfile: profiles.origin,
      registeredBy: 'ops-console',
    });
    // The platform, with nothing but that client_id: a loopback port of its choosing (RFC 8252).
    const redirectUri = `http://127.0.0.1:${49_152 + Math.floor(Math.random() * 1000)}/callback`;
    const { code, verifier } = await codeFor(clientId, redirectUri);
    const t = await form(`${sys.url}/oauth/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      code_verifier: verifier,
      client_id: clientId,
    });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    const checkout = await ucpCall(
      sys.url,
      { key: String(t.body.access_token), profileUrl },
      'POST',
      '/checkout-sessions',
      {
        line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }],
      },
    );
    expect(checkout.status, JSON.stringify(checkout.body)).toBe(201);
    await page.context().close();
  });

  it('registers a confidential platform with its JWK Set; the platform authenticates with private_key_jwt', async () => {
    const key = await platformKey();
    const page = await agentsPage(admin);
    // private_key_jwt without keys is not sent: the mutation would register a public client.
    await fill(page, {
      name: 'Console confidential app',
      redirectUris: 'https://platform.example/cb',
      ucpProfile: profiles.origin,
      jwks: '',
    });
    await page.getByText('private_key_jwt needs the platform’s public keys').first().waitFor();
    expect((await registered()).some((c) => c.name === 'Console confidential app')).toBe(false);
    await registerForm(page)
      .getByLabel('JWK Set of the platform')
      .fill(JSON.stringify({ keys: [key.publicJwk] }));
    await registerForm(page).getByRole('button', { name: 'Register platform' }).click();
    const clientId = await shownClientId(page);
    expect((await registered()).find((c) => c.clientId === clientId)?.tokenEndpointAuthMethod).toBe(
      'private_key_jwt',
    );
    const { code, verifier } = await codeFor(clientId, 'https://platform.example/cb');
    const base = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://platform.example/cb',
      code_verifier: verifier,
    };
    // Its client_id alone (none) is not enough for a confidential client; its signed assertion is.
    const bare = await form(`${sys.url}/oauth/token`, { ...base, client_id: clientId });
    expect(bare.body.error).toBe('invalid_client');
    const { code: code2, verifier: verifier2 } = await codeFor(clientId, 'https://platform.example/cb');
    const t = await form(`${sys.url}/oauth/token`, {
      ...base,
      code: code2,
      code_verifier: verifier2,
      client_assertion_type: ASSERTION,
      client_assertion: await key.sign(clientId, issuer),
    });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    expect(t.body.token_type).toBe('Bearer');
    await page.context().close();
  });

  it('registers a confidential platform by the URL of its JWK Set; its keys are fetched when it authenticates', async () => {
    const key = await platformKey();
    const jwksUri = profiles.set('/jwks.json', { keys: [key.publicJwk] });
    const page = await agentsPage(admin);
    await fill(page, {
      name: 'Console jwks_uri app',
      redirectUris: 'https://platform.example/cb',
      ucpProfile: profiles.origin,
      jwksUri,
    });
    const clientId = await shownClientId(page);
    await expect
      .poll(() => page.getByTestId('oauth-client').filter({ hasText: clientId }).textContent())
      .toContain(jwksUri);
    expect((await registered()).find((c) => c.clientId === clientId)).toMatchObject({
      tokenEndpointAuthMethod: 'private_key_jwt',
      jwksUri,
    });
    const fetchesBefore = profiles.hits('/jwks.json');
    const { code, verifier } = await codeFor(clientId, 'https://platform.example/cb');
    const t = await form(`${sys.url}/oauth/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: 'https://platform.example/cb',
      code_verifier: verifier,
      client_assertion_type: ASSERTION,
      client_assertion: await key.sign(clientId, issuer),
    });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    expect(profiles.hits('/jwks.json')).toBeGreaterThan(fetchesBefore);
    await page.context().close();
  });

  it("shows the API's refusal in words on its field, and registers nothing", async () => {
    const page = await agentsPage(admin);
    const before = (await registered()).length;
    await fill(page, {
      name: 'Plain http app',
      redirectUris: 'http://platform.example/cb',
      ucpProfile: profiles.origin,
    });
    const error = page.locator('#register-redirectUris-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('redirectUris: https, or http to 127.0.0.1 or [::1]');
    expect(await registerForm(page).getByLabel('Redirect URIs').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByTestId('registered-client').count()).toBe(0);
    expect((await registered()).length).toBe(before);
    await page.context().close();
  });

  it('offers no form to an operator without agents:admin, whom the API refuses anyway', async () => {
    const reader = await sys.token(['agents:read'], 'ops-reader');
    const page = await agentsPage(reader);
    await page.getByText('Registering a platform needs the agents:admin role.').waitFor();
    expect(await registerForm(page).count()).toBe(0);
    // The list is the API's to refuse: its 403 is shown in the section.
    const section = page.getByRole('region', { name: 'Platforms (OAuth 2.0 clients)' });
    await section.getByRole('alert').waitFor();
    expect(await section.getByRole('alert').textContent()).toContain('403 FORBIDDEN');
    const r = await sys.gql(
      'mutation ($i: RegisterOAuthClientInput!) { registerOAuthClient(input: $i) { clientId } }',
      {
        token: reader,
        variables: { i: { name: 'P', redirectUris: ['https://p.example/cb'], ucpProfile: profiles.origin } },
      },
    );
    expect(r.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    await page.context().close();
  });

  it('is usable at phone width with a long redirect URI listed: the page does not scroll sideways', async () => {
    const long = `https://platform.example/${'oauth-callback-'.repeat(8)}end`;
    const r = await sys.gql(
      'mutation ($i: RegisterOAuthClientInput!) { registerOAuthClient(input: $i) { clientId } }',
      {
        token: admin,
        variables: { i: { name: 'Long URI app', redirectUris: [long], ucpProfile: profiles.origin } },
      },
    );
    expect(r.errors).toBeUndefined();
    const page = await agentsPage(admin, { width: 375, height: 800 });
    await page.getByTestId('oauth-client').filter({ hasText: 'Long URI app' }).waitFor();
    await registerForm(page).waitFor();
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0);
    await page.context().close();
  });
});
