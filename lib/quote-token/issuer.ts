import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { CartInput } from './canonical-cart.ts';
import { type QuoteClaims, type QuoteFacts, quoteClaims } from './claims.ts';
import { FileQuoteKeyStore, type QuoteKeys } from './key-store.ts';
import { signQuoteToken } from './sign.ts';
import { type Verification, verifyQuoteToken } from './verify.ts';

type TokenConfig = Pick<
  Config,
  'QUOTE_TOKEN_ISSUER' | 'QUOTE_TOKEN_AUDIENCE' | 'QUOTE_TOKEN_KEYS_FILE' | 'DATA_DIR'
>;

export const quoteKeysFile = (config: Pick<Config, 'QUOTE_TOKEN_KEYS_FILE' | 'DATA_DIR'>): string =>
  config.QUOTE_TOKEN_KEYS_FILE ?? join(config.DATA_DIR, 'keys', 'quote-signing.json');

export interface IssuedToken {
  token: string;
  claims: QuoteClaims;
  /** ISO 8601 UTC. */
  expiresAt: string;
}

/** Issues and checks quote tokens with one key store and the configured issuer and audience. */
export interface QuoteTokens {
  readonly keys: QuoteKeys;
  /** `cartHash`, when the caller has it already (the quote's id), saves hashing the cart twice. */
  issue(cart: CartInput, facts: QuoteFacts, cartHash?: string): Promise<IssuedToken>;
  verify(token: string, cart: CartInput): Promise<Verification>;
}

export function createQuoteTokens(config: TokenConfig, keys: QuoteKeys, clock: Clock): QuoteTokens {
  const issuer = config.QUOTE_TOKEN_ISSUER;
  const audience = config.QUOTE_TOKEN_AUDIENCE;
  return {
    keys,
    async issue(cart, facts, cartHash) {
      const claims = quoteClaims(cart, facts, {
        issuer,
        audience,
        nowMs: clock.now(),
        jti: randomUUID(),
        ...(cartHash ? { cartHash } : {}),
      });
      const token = signQuoteToken(keys, claims);
      return { token, claims, expiresAt: new Date(claims.exp * 1000).toISOString() };
    },
    verify: (token, cart) =>
      verifyQuoteToken(token, cart, { keys: (kid) => keys.verificationKey(kid), issuer, audience, clock }),
  };
}

/** One key store per file per process: the edge and the promotions subgraph share it when embedded. */
const opened = new Map<string, Promise<FileQuoteKeyStore>>();

export async function quoteTokensFor(config: TokenConfig, clock: Clock): Promise<QuoteTokens> {
  const file = quoteKeysFile(config);
  let store = opened.get(file);
  if (!store) {
    store = FileQuoteKeyStore.open(file, clock);
    opened.set(file, store);
    store.catch(() => opened.delete(file));
  }
  return createQuoteTokens(config, await store, clock);
}
