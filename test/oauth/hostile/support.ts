/**
 * What the hostile identity-linking test's parts share (../hostile.test.ts): the scopes, redirect
 * URIs and line they use, and the context its beforeAll fills: the system, the profile, the
 * buyer's admin token, the registered clients and their keys, and the token endpoint's calls.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import { codeGrant, form, link, platformKey } from '../../../harness/oauth-platform.ts';
import { startEmbedded, type TestSystem } from '../../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../../harness/ucp-platform.ts';
import { identityLinkingFor } from '../../../subgraphs/procurement/identity-linking/service.ts';
import { issueKey } from '../../acp/support/acp.ts';

export const SPIFFE = 'spiffe://example.org/ns/ai/sa/procurement-agent/hostile-buyer';
export const BOTH = 'dev.ucp.shopping.checkout:manage dev.ucp.shopping.order:read';
export const READ = 'dev.ucp.shopping.order:read';
export const LOOPBACK = 'http://127.0.0.1/cb';
export const WEB = 'https://platform.example/cb';
export const ASSERTION = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The profile server is on loopback over http: allowed as the system runs (UCP_PROFILE_ALLOW_INSECURE). */
const INSECURE = { allowInsecureProfiles: true };
export const LINE = { line_items: [{ item: { id: 'SKU-ABC-000001' }, quantity: 1 }] };

type PlatformKey = Awaited<ReturnType<typeof platformKey>>;
type Params = Record<string, string | undefined>;

/** The test's state, filled by its beforeAll: the parts read it inside their tests. */
export interface HostileContext {
  readonly sys: TestSystem;
  readonly profiles: ProfileServer;
  readonly profileUrl: string;
  /** The buyer's token with agents:admin (the consent page's). */
  readonly admin: string;
  readonly issuer: string;
  /** A public client at loopback; C (keyC) and D (keyD), confidential clients at WEB. */
  readonly publicClient: string;
  readonly confidential: string;
  readonly other: string;
  readonly keyC: PlatformKey;
  readonly keyD: PlatformKey;
  token(params: Params): ReturnType<typeof form>;
  revoke(params: Params): ReturnType<typeof form>;
  /** A checkout with LINE at the UCP endpoint under `bearer`. */
  checkout(bearer: string): ReturnType<typeof ucpCall>;
  /** A fresh code for the public client at an ephemeral loopback port. */
  publicCode(scope?: string): ReturnType<typeof publicCode>;
  /** The public client's access and refresh tokens for a fresh code. */
  publicTokens(scope?: string): Promise<{ access: string; refresh: string }>;
}

/** Registers the test's beforeAll (system, profile, the buyer's key, the clients) and afterAll. */
export function hostileContext(): HostileContext {
  const o = {
    token: (params: Params) => form(`${o.sys.url}/oauth/token`, params),
    revoke: (params: Params) => form(`${o.sys.url}/oauth/revoke`, params),
    checkout: (bearer: string) =>
      ucpCall(o.sys.url, { key: bearer, profileUrl: o.profileUrl }, 'POST', '/checkout-sessions', LINE),
    publicCode: (scope = BOTH) => publicCode(o, scope),
    publicTokens: (scope = BOTH) => publicTokens(o, scope),
  } as { -readonly [K in keyof HostileContext]: HostileContext[K] };
  beforeAll(async () => {
    o.sys = await startEmbedded({ UCP_PROFILE_ALLOW_INSECURE: 'true' });
    o.issuer = `http://${o.sys.config.HOST}:${o.sys.config.PORT}`;
    o.profiles = await startProfileServer();
    o.profileUrl = o.profiles.set('/profile.json', platformProfile());
    await issueKey(o.sys, {
      spiffeId: SPIFFE,
      scopes: ['orders:create', 'orders:read'],
      ucpProfile: o.profiles.origin,
    });
    o.admin = await o.sys.token(['agents:admin'], 'buyer-admin');
    const linking = await identityLinkingFor(o.sys.platform);
    o.publicClient = String(
      (
        await linking.registerClient(
          { name: 'Agent app', redirectUris: [LOOPBACK], ucpProfile: o.profiles.origin },
          INSECURE,
        )
      ).client_id,
    );
    o.keyC = await platformKey();
    o.keyD = await platformKey();
    const reg = async (name: string, k: PlatformKey) =>
      String(
        (
          await linking.registerClient(
            { name, redirectUris: [WEB], jwks: [k.publicJwk], ucpProfile: o.profiles.origin },
            INSECURE,
          )
        ).client_id,
      );
    o.confidential = await reg('Platform C', o.keyC);
    o.other = await reg('Platform D', o.keyD);
  }, 60_000);
  afterAll(async () => {
    await o.profiles?.close();
    await o.sys?.close();
  });
  return o;
}

async function publicCode(o: HostileContext, scope: string) {
  const redirectUri = `http://127.0.0.1:${50_000 + Math.floor(Math.random() * 10_000)}/cb`;
  const r = await link({
    base: o.sys.url,
    clientId: o.publicClient,
    redirectUri,
    scope,
    adminToken: o.admin,
    spiffeId: SPIFFE,
  });
  return {
    code: r.location.searchParams.get('code') as string,
    verifier: r.verifier,
    redirectUri,
    location: r.location,
  };
}

async function publicTokens(o: HostileContext, scope: string) {
  const c = await o.publicCode(scope);
  const t = await o.token(codeGrant(c, o.publicClient));
  expect(t.status, JSON.stringify(t.body)).toBe(200);
  return { access: String(t.body.access_token), refresh: String(t.body.refresh_token) };
}
