/**
 * What the UCP catalog test's parts share (../catalog.test.ts): the catalog's size, the answer
 * shapes they read, and the context its beforeAll fills: the system, a profile with the catalog
 * capabilities and one without, and `call`, a POST to the UCP endpoint as that platform.
 */
import { afterAll, beforeAll } from 'vitest';
import { startEmbedded, type TestSystem } from '../../../harness/system.ts';
import {
  type ProfileServer,
  platformProfile,
  startProfileServer,
  ucpCall,
} from '../../../harness/ucp-platform.ts';

export const SIZE = 1200;
export type Json = Record<string, unknown>;
export type Variant = {
  id: string;
  sku: string;
  price: { amount: number; currency: string };
  inputs?: { id: string; match: string }[];
};
export type Product = {
  id: string;
  title: string;
  variants: Variant[];
  options?: { name: string; values: Json[] }[];
  selected?: Json[];
};

/** The test's state, filled by its beforeAll: the parts read it inside their tests. */
export interface CatalogContext {
  readonly sys: TestSystem;
  readonly profiles: ProfileServer;
  /** A profile with checkout, order, fulfillment and both catalog capabilities. */
  readonly profileUrl: string;
  /** A profile with checkout only. */
  readonly bare: string;
  /** POST `path` under the UCP endpoint as the platform of `profileUrl` (or `o.profile`). */
  call(path: string, body: unknown, o?: { key?: string; profile?: string }): ReturnType<typeof ucpCall>;
}

/** Registers the test's beforeAll (system with a catalog of SIZE, profiles) and afterAll. */
export function catalogContext(): CatalogContext {
  const ctx = {
    call: (path: string, body: unknown, o: { key?: string; profile?: string } = {}) =>
      ucpCall(
        ctx.sys.url,
        { profileUrl: o.profile ?? ctx.profileUrl, ...(o.key ? { key: o.key } : {}) },
        'POST',
        path,
        body,
      ),
  } as { -readonly [K in keyof CatalogContext]: CatalogContext[K] };
  beforeAll(async () => {
    ctx.sys = await startEmbedded({
      UCP_PROFILE_ALLOW_INSECURE: 'true',
      CATALOG_SIZE: String(SIZE),
      // Every call here comes from one address: on a slow machine the default bucket (20, 10/s)
      // ran dry mid-file. The rate limit has its own tests.
      RATE_LIMIT_CAPACITY: '100000',
      RATE_LIMIT_REFILL_PER_SECOND: '10000',
    });
    ctx.profiles = await startProfileServer();
    ctx.profileUrl = ctx.profiles.set(
      '/platform.json',
      platformProfile({
        capabilities: ['checkout', 'order', 'fulfillment', 'catalog.search', 'catalog.lookup'],
      }),
    );
    ctx.bare = ctx.profiles.set('/bare.json', platformProfile({ capabilities: ['checkout'] }));
  }, 120_000);
  afterAll(async () => {
    await ctx.profiles?.close();
    await ctx.sys?.close();
  });
  return ctx;
}
