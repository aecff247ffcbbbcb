import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/**
 * The warm-up's rehearsals (issue 48). Before /readyz says ready, the process sends itself whole
 * orders (lib/http/warm-up.ts, gateway/warm-up.ts), so their code is compiled and their store
 * statements prepared before the first real order: every step runs, for a reserved identity, and
 * the order's statements run in a transaction that is rolled back. A request rehearses only when
 * it carries this process's token (random, made at start, sent only to itself over loopback or
 * inject) while the warm-up runs: after ready, the header means nothing.
 */
export const REHEARSAL_HEADER = 'x-warm-up-rehearsal';

/** What a rehearsal was: the audit's one entry says how many of each ran, not what they were. */
export type RehearsalKind = 'order' | 'completion';

export interface Rehearsals {
  /** This process's token (never logged, never sent elsewhere). */
  readonly token: string;
  /** Whether this request rehearses: the token, while the warm-up runs. */
  of(req: FastifyRequest): boolean;
  /** Whether the warm-up runs now (the process is not ready yet). */
  warming(): boolean;
  /** Counts one rehearsal of `kind` (the paths that rehearse call it). */
  count(kind: RehearsalKind): void;
  /** Called once when the warm-up ends, with the counts: the audit's entry is written there. */
  onFinish(fn: (counts: Readonly<Record<RehearsalKind, number>>) => Promise<void> | void): void;
  start(): void;
  finish(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    rehearsals: Rehearsals;
  }
}

export function createRehearsals(): Rehearsals {
  const token = randomBytes(24).toString('hex');
  const expected = Buffer.from(token);
  let active = false;
  const counts: Record<RehearsalKind, number> = { order: 0, completion: 0 };
  const finishers: ((c: Readonly<Record<RehearsalKind, number>>) => Promise<void> | void)[] = [];
  return {
    token,
    of(req) {
      if (!active) return false;
      const h = req.headers[REHEARSAL_HEADER];
      if (typeof h !== 'string' || h.length !== token.length) return false;
      return timingSafeEqual(Buffer.from(h), expected);
    },
    warming: () => active,
    count(kind) {
      counts[kind]++;
    },
    onFinish(fn) {
      finishers.push(fn);
    },
    start() {
      active = true;
    },
    async finish() {
      active = false;
      for (const fn of finishers) await fn({ ...counts });
    },
  };
}

/** Decorates the app with its rehearsals (createHttpApp does, once per server). */
export function decorateRehearsals(app: FastifyInstance): Rehearsals {
  const r = createRehearsals();
  app.decorate('rehearsals', r);
  return r;
}
