import { createHash, timingSafeEqual } from 'node:crypto';

/** The header that carries the gateway's shared secret to the subgraphs. */
export const GATEWAY_SECRET_HEADER = 'x-gateway-secret';

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Whether a presented secret is the expected one; constant time whatever the lengths (hash first). */
export const sameSecret = (a: string, b: string): boolean => timingSafeEqual(digest(a), digest(b));
