/**
 * The token check end to end: the same UCP call (`GET /ucp/checkout-sessions/{id}`, one session
 * of the identity) on the embedded system, authenticated by the identity's API key and by an
 * OAuth access token linked to the same identity, open loop at one fixed rate, in alternated
 * steps (key, token, token, key, …: each credential as often first as second), each latency from
 * its request's due time. The token is obtained as a platform does (the tests' route,
 * harness/oauth-platform.ts): a public client registered by an operator, authorization code
 * with PKCE through the console's consent page, the token endpoint. No backdoor.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { form, link } from '../../harness/oauth-platform.ts';
import { gql, testConfig } from '../../harness/system.ts';
import { platformProfile, startProfileServer, ucpCall } from '../../harness/ucp-platform.ts';
import { mintDevToken } from '../../lib/auth/jwt.ts';
import { issueBenchKey } from '../acp/key.ts';
import { load } from '../loadgen.ts';
import { openLoad, type StreamResult } from '../open-loop/generator.ts';

const NAME = 'bench-linked';
const SPIFFE = `spiffe://example.org/ns/ai/sa/procurement-agent/${NAME}`;
const SCOPE = 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read';
const REDIRECT = 'http://127.0.0.1/callback';
const REGISTER = `mutation ($input: RegisterOAuthClientInput!) {
  registerOAuthClient(input: $input) { clientId }
}`;

export type Credential = 'API key' | 'access token';

export interface E2eStep {
  credential: Credential;
  result: StreamResult;
}

export interface E2eRun {
  rate: number;
  seconds: number;
  steps: E2eStep[];
}

/** A public platform client, linked to the key's identity by the consent page: its access token. */
async function linkedToken(url: string, dataDir: string, profileOrigin: string): Promise<string> {
  const admin = await mintDevToken(testConfig({ DATA_DIR: dataDir }), {
    subject: 'buyer-admin',
    roles: ['agents:admin'],
  });
  const reg = await gql(url, REGISTER, {
    token: admin,
    variables: { input: { name: 'Bench platform', redirectUris: [REDIRECT], ucpProfile: profileOrigin } },
  });
  const clientId = (reg.data?.registerOAuthClient as { clientId?: string } | undefined)?.clientId;
  if (!clientId) throw new Error(`no OAuth client: ${JSON.stringify(reg.errors)}`);
  const r = await link({
    base: url,
    clientId,
    redirectUri: REDIRECT,
    scope: SCOPE,
    adminToken: admin,
    spiffeId: SPIFFE,
  });
  const code = r.location.searchParams.get('code');
  if (!code) throw new Error(`no authorization code: ${r.location}`);
  const t = await form(`${url}/oauth/token`, {
    grant_type: 'authorization_code',
    code,
    redirect_uri: REDIRECT,
    code_verifier: r.verifier,
    client_id: clientId,
  });
  if (t.status !== 200 || typeof t.body.access_token !== 'string')
    throw new Error(`token endpoint: ${t.status} ${JSON.stringify(t.body)}`);
  return t.body.access_token;
}

export async function runTokenE2e(
  o: { rate: number; seconds: number; rounds: number; warmupSeconds: number },
  log: (s: string) => void,
): Promise<E2eRun> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ac-bench-token-'));
  const profiles = await startProfileServer();
  const profileUrl = profiles.set('/profile.json', platformProfile());
  const system = await startEmbeddedSystem(process.env.BENCH_NODE, [], {
    DATA_DIR: dataDir,
    UCP_PROFILE_ALLOW_INSECURE: 'true',
  });
  try {
    const key = await issueBenchKey(system.url, dataDir, NAME, {
      scopes: ['orders:create', 'orders:read'],
      ucpProfile: profiles.origin,
    });
    const token = await linkedToken(system.url, dataDir, profiles.origin);
    const created = await ucpCall(system.url, { key, profileUrl }, 'POST', '/checkout-sessions', {
      line_items: [{ item: { id: 'SKU-APP-000003' }, quantity: 2 }],
    });
    const id = created.body.id;
    if (created.status !== 201 || typeof id !== 'string')
      throw new Error(`checkout create: ${created.status} ${JSON.stringify(created.body)}`);
    const request = (bearer: string) => ({
      method: 'GET' as const,
      path: `/ucp/checkout-sessions/${id}`,
      headers: { authorization: `Bearer ${bearer}`, 'ucp-agent': `profile="${profileUrl}"` },
    });
    // Both credentials must read the session (the same identity owns it): a refusal is no latency.
    for (const bearer of [key, token]) {
      const r = await ucpCall(system.url, { key: bearer, profileUrl }, 'GET', `/checkout-sessions/${id}`);
      if (r.status !== 200)
        throw new Error(`GET with ${bearer.slice(0, 4)}…: ${r.status} ${JSON.stringify(r.body)}`);
    }
    // Warm-up, both credentials in turn, closed loop: the start's JIT and caches are no step's.
    await load({
      url: system.url,
      requests: [request(key), request(token)],
      connections: 10,
      seconds: o.warmupSeconds,
    });
    const steps: E2eStep[] = [];
    // ABBA: key, token, token, key, key, token, …
    const order: Credential[] = Array.from({ length: 2 * o.rounds }, (_, i) =>
      i % 4 === 0 || i % 4 === 3 ? 'API key' : 'access token',
    );
    for (const credential of order) {
      const bearer = credential === 'API key' ? key : token;
      const r = await openLoad({
        url: system.url,
        primary: { requests: [request(bearer)], rate: o.rate },
        seconds: o.seconds,
        warmupSeconds: 2,
      });
      steps.push({ credential, result: r.primary });
      log(
        `token-check / GET checkout by ${credential}, ${o.rate}/s: p50 ${r.primary.p50.toFixed(3)} ms, p99 ${r.primary.p99.toFixed(3)} ms, ${r.primary.non2xx + r.primary.errors} failed\n`,
      );
    }
    return { rate: o.rate, seconds: o.seconds, steps };
  } finally {
    await system.stop();
    await profiles.close();
  }
}
