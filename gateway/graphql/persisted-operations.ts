import type { PersistedQueryOptions } from '@apollo/server';
import { boundedStringCache, type StringCache } from './bounded-cache.ts';
import type { PersistedOperations } from './manifest.ts';

/**
 * Automatic persisted queries (Apollo's APQ protocol, served by Apollo Server itself): a client
 * sends `extensions.persistedQuery.sha256Hash` alone; on PERSISTED_QUERY_NOT_FOUND it sends the
 * hash with the document once, and the gateway keeps the document under its hash.
 *
 * The cache answers the manifest's operations first (an id from the manifest works without
 * registering it, and cannot be evicted), then the registrations, kept in an LRU bounded by
 * `registrationBytes`. Apollo registers a document only once it has parsed, validated (the
 * limits included) and passed the role rules, so a refused document is never kept.
 */
export function usePersistedOperations(opts: { manifest: PersistedOperations; registrationBytes: number }): {
  persistedQueries: PersistedQueryOptions;
  registrations: ReturnType<typeof boundedStringCache>;
} {
  const registrations = boundedStringCache(opts.registrationBytes);
  // Apollo prefixes the keys it passes ("apq:<sha256>"); the hash is what follows the last colon.
  const idOf = (key: string) => key.slice(key.lastIndexOf(':') + 1);
  const cache: StringCache = {
    async get(key) {
      return opts.manifest.get(idOf(key)) ?? registrations.get(key);
    },
    async set(key, value, options) {
      if (!opts.manifest.has(idOf(key))) await registrations.set(key, value, options);
    },
    async delete(key) {
      return registrations.delete(key);
    },
  };
  // No TTL: the size bound evicts the least recently used, and a hash always names the same document.
  return { persistedQueries: { cache, ttl: null }, registrations };
}
