import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { SearchRequest } from './request.ts';

/**
 * Keyset cursors: where the last page ended (its last product's rank and id), bound to the search
 * that made it and signed. A page after it starts strictly after that position, so pages neither
 * repeat nor skip a product while the catalog stands still, and a deep page costs what the first
 * does. The signature (HMAC-SHA256 under a key from the deployment's shared secret) makes a
 * forged cursor, or one from another search, a clear 400 instead of an arbitrary page. UCP asks
 * for opaque cursors; these are base64url of JSON, a dot, and the signature.
 */

export interface CursorPosition {
  /** The last product's rank (0 for a browse); compared as the same float the query computed. */
  readonly rank: number;
  readonly productId: string;
  /** How the first page matched (its words as typed, corrected, or titles alike): later pages match so too. */
  readonly matcher: unknown;
}

/** The search a cursor belongs to: everything but the cursor and the page size. */
export function searchFingerprint(req: SearchRequest): string {
  return createHash('sha256')
    .update(JSON.stringify({ q: req.query ?? null, f: req.filters }))
    .digest('base64url')
    .slice(0, 22);
}

export interface Cursors {
  make(req: SearchRequest, at: CursorPosition): string;
  /** The position, or undefined when the cursor is not one this catalog gave for this search. */
  read(req: SearchRequest, cursor: string): CursorPosition | undefined;
}

export function cursors(secret: string): Cursors {
  const key = createHash('sha256').update(`catalog-search-cursor\0${secret}`).digest();
  const sign = (body: string) => createHmac('sha256', key).update(body).digest().subarray(0, 16);
  return {
    make(req, at) {
      const body = Buffer.from(
        JSON.stringify({ s: searchFingerprint(req), r: at.rank, p: at.productId, m: at.matcher }),
        'utf8',
      ).toString('base64url');
      return `${body}.${sign(body).toString('base64url')}`;
    },
    read(req, cursor) {
      const [body, mac, extra] = cursor.split('.');
      if (!body || !mac || extra !== undefined) return undefined;
      const given = Buffer.from(mac, 'base64url');
      const expected = sign(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
      try {
        const c = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as {
          s?: unknown;
          r?: unknown;
          p?: unknown;
          m?: unknown;
        };
        if (c.s !== searchFingerprint(req) || typeof c.r !== 'number' || typeof c.p !== 'string')
          return undefined;
        return { rank: c.r, productId: c.p, matcher: c.m };
      } catch {
        return undefined;
      }
    },
  };
}
