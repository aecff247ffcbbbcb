/** The event bus contract (event-bus.contract.ts) in process and on the machine's Redis. */

import { TEST_REDIS_URL, uniquePrefix } from '../../harness/services.ts';
import { createMemoryBus } from '../../lib/events/memory.ts';
import { createRedis } from '../../lib/redis.ts';
import { eventBusContract, streamsTopology } from './event-bus.contract.ts';

eventBusContract('in process', async () => {
  const bus = createMemoryBus('/test/bus', () => {});
  return { instance: async () => bus, close: () => bus.close() };
});

eventBusContract('Redis Streams', async () =>
  streamsTopology(
    (use) => createRedis({ REDIS_URL: TEST_REDIS_URL, REDIS_CLUSTER: false }, use),
    `${uniquePrefix('bus')}events`,
  ),
);
