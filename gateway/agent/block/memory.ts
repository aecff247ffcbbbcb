import { BoundedMap } from '../../../lib/bounded-map.ts';
import { afterError, type BlockPolicy, type BlockState, EMPTY_BLOCK } from './policy.ts';
import type { BlockStore } from './store.ts';

export function memoryBlockStore(policy: BlockPolicy, maxEntries = 100_000): BlockStore {
  const states = new BoundedMap<string, BlockState>(maxEntries);
  return {
    async get(identity) {
      return states.get(identity) ?? EMPTY_BLOCK;
    },
    async recordError(identity, now) {
      const next = afterError(states.get(identity) ?? EMPTY_BLOCK, now, policy);
      states.set(identity, next);
      return next;
    },
    async reset(identity) {
      const s = states.get(identity);
      if (s && s.count > 0) states.set(identity, { count: 0, until: s.until });
    },
    async clear(identity) {
      const s = states.get(identity) ?? EMPTY_BLOCK;
      states.delete(identity);
      return s;
    },
  };
}
