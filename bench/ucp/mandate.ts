/**
 * The platform's side of AP2 for the UCP load (./flows.ts): checkout mandates made as a platform
 * makes them when its user confirms (ap2-mandates.md at v2026-04-08), by ./mandate-thread.mjs.
 *
 * In a thread of their own: a mandate takes milliseconds of CPU (two ECDSA signatures, the
 * disclosure's digest), and made in the loop that times the answers it would delay the timing of
 * every answer that arrived meanwhile, making the server look slower with AP2 than it is. At the
 * lowest priority (the thread lowers its own): on a machine of two cores it would otherwise take
 * CPU from the server's threads in the AP2 rounds only.
 */
import { Worker } from 'node:worker_threads';

/** A private JWK (EC P-256) as JSON: what a worker can be given. */
export type PrivateJwk = Record<string, unknown> & { d: string };

export interface Ap2Platform {
  /** The key the platform profile's `signing_keys` publishes as `kid`. */
  issuer: PrivateJwk;
  kid: string;
  /** The holder's key (`cnf.jwk`), which signs the KB-JWT. */
  holder: PrivateJwk;
  /** The KB-JWT's `aud`: the business profile's URL. */
  audience: string;
}

type Checkout = Record<string, unknown> & { id: string };

/** A thread that makes mandates for `a`: `make` resolves with one per checkout; `close` ends it. */
export function mandateThread(a: Ap2Platform): {
  make(checkout: Checkout): Promise<string>;
  close(): Promise<void>;
} {
  const worker = new Worker(new URL('./mandate-thread.mjs', import.meta.url), { workerData: { ap2: a } });
  const waiting = new Map<number, { ok: (m: string) => void; fail: (e: Error) => void }>();
  let n = 0;
  worker.on('message', (m: { id: number; mandate?: string; error?: string }) => {
    const w = waiting.get(m.id);
    waiting.delete(m.id);
    if (m.mandate !== undefined) w?.ok(m.mandate);
    else w?.fail(new Error(`mandate: ${m.error}`));
  });
  // A thread that died fails every mandate asked of it, now and later (a flow must not wait for ever).
  let dead: Error | undefined;
  worker.once('error', (e) => {
    dead = e;
    for (const w of waiting.values()) w.fail(e);
  });
  return {
    make: (checkout) =>
      new Promise((ok, fail) => {
        if (dead) return fail(dead);
        const id = ++n;
        waiting.set(id, { ok, fail });
        worker.postMessage({ id, checkout });
      }),
    close: async () => {
      await worker.terminate();
    },
  };
}
