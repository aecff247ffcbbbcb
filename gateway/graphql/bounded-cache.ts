import type { DocumentStore, PersistedQueryOptions } from '@apollo/server';
import type { DocumentNode } from 'graphql';
import { LRUCache } from 'lru-cache';

/** Apollo's KeyValueCache of strings (the APQ cache's shape). */
export type StringCache = NonNullable<PersistedQueryOptions['cache']>;

/**
 * Heap bytes a parsed DocumentNode holds per character of its source: measured here at 32 on
 * Node 20 (the CartQuote operation: 1,195 characters, 38.6 kB with locations; the location
 * tokens are most of it). Apollo's default document store sizes a document by the length of
 * its JSON, about 8.5 per character, so its "30 MiB" holds about four times that in heap.
 */
export const DOCUMENT_HEAP_PER_SOURCE_CHAR = 32;

/** A JS string's heap cost, counting two bytes a character (the worst case). */
const stringBytes = (s: string) => 2 * s.length;

/** Apollo's KeyValueCache over lru-cache, bounded by the summed `sizeOf` of its entries. */
function lruKeyValueCache<V extends object | string>(maxBytes: number, sizeOf: (value: V) => number) {
  const lru = new LRUCache<string, V>({ maxSize: maxBytes, sizeCalculation: (v) => Math.max(1, sizeOf(v)) });
  return {
    lru,
    async get(key: string) {
      return lru.get(key);
    },
    async set(key: string, value: V, options?: { ttl?: number | null }) {
      // An entry larger than the whole cache is not kept (lru-cache refuses it silently).
      lru.set(key, value, options?.ttl ? { ttl: options.ttl * 1000 } : undefined);
    },
    async delete(key: string) {
      return lru.delete(key);
    },
  };
}

/**
 * Apollo's document store: parsed and validated documents by query hash, so a known operation
 * skips parsing and validation (the operation limits included). Bounded by an estimate of heap
 * bytes rather than Apollo's JSON.stringify of each new document, which costs CPU on every miss.
 */
export function boundedDocumentStore(maxBytes: number): DocumentStore & { readonly entries: () => number } {
  const cache = lruKeyValueCache<DocumentNode>(
    maxBytes,
    (doc) => (doc.loc?.end ?? 1_000) * (DOCUMENT_HEAP_PER_SOURCE_CHAR + 2),
  );
  return Object.assign(cache, { entries: () => cache.lru.size });
}

/** A string cache bounded by the heap its strings take (APQ registrations). */
export function boundedStringCache(maxBytes: number): StringCache & { readonly entries: () => number } {
  const cache = lruKeyValueCache<string>(maxBytes, stringBytes);
  return Object.assign(cache, { entries: () => cache.lru.size });
}
