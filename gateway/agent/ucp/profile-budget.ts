import { BoundedMap } from '../../../lib/bounded-map.ts';
import type { Clock } from '../../../lib/clock.ts';
import { type BucketPolicy, type BucketState, take } from '../rate-limit/bucket.ts';

/**
 * The budget of platform-profile fetches made before the caller is authenticated (a signed UCP
 * call: the profile is fetched to find the key its signature is checked with). Without it anyone
 * could make this server connect to hosts of their choosing, as often as they like (docs/ucp.md,
 * "Fetches before authentication"). Three bounds, all in this process: a token bucket per
 * source (client IPv4 address or IPv6 /64), one for the whole process, and a number of such
 * fetches in flight at once (each may hold a socket for UCP_PROFILE_TIMEOUT_MS). A refusal takes
 * nothing from either bucket. Fetches after authentication (an API key bound to the profile)
 * are not counted: the key's holder can only name profiles an operator bound it to.
 */
export interface FetchBudgetOptions {
  readonly clock: Clock;
  /** Fetches a minute per source (the bucket's burst too). */
  readonly perSourcePerMinute: number;
  /** Fetches a minute for the process (the bucket's burst too). */
  readonly globalPerMinute: number;
  /** Fetches in flight at once. */
  readonly concurrency: number;
}

export type Admission =
  | { readonly ok: true; done(): void }
  | { readonly ok: false; readonly retryAfterS: number; readonly why: 'source' | 'process' | 'in-flight' };

export interface FetchBudget {
  /** One fetch for `source`, or why not; call `done()` when the fetch has settled. */
  admit(source: string): Admission;
}

/** Sources remembered at most (the oldest are forgotten: a forgotten source starts full). */
const MAX_SOURCES = 10_000;

const perMinute = (n: number): BucketPolicy => ({ capacity: n, refillPerSecond: n / 60 });

export function fetchBudget(o: FetchBudgetOptions): FetchBudget {
  const sourcePolicy = perMinute(o.perSourcePerMinute);
  const globalPolicy = perMinute(o.globalPerMinute);
  const sources = new BoundedMap<string, BucketState>(MAX_SOURCES);
  let global: BucketState | undefined;
  let inFlight = 0;
  return {
    admit(source) {
      if (inFlight >= o.concurrency) return { ok: false, retryAfterS: 1, why: 'in-flight' };
      const now = o.clock.now();
      const own = take(sources.get(source), now, sourcePolicy);
      const all = take(global, now, globalPolicy);
      if (!own.result.allowed)
        return { ok: false, retryAfterS: Math.ceil(own.result.retryAfterMs / 1000), why: 'source' };
      if (!all.result.allowed)
        return { ok: false, retryAfterS: Math.ceil(all.result.retryAfterMs / 1000), why: 'process' };
      sources.delete(source); // re-inserted last: BoundedMap forgets the least recently used first
      sources.set(source, own.state);
      global = all.state;
      inFlight++;
      let settled = false;
      return {
        ok: true,
        done() {
          if (settled) return;
          settled = true;
          inFlight--;
        },
      };
    },
  };
}
