import type { RedisClient } from '../redis.ts';
import { type EventBus, HandlerSet } from './bus.ts';
import { type CloudEvent, cloudEvent } from './cloudevent.ts';

/**
 * Distributed topology: one Redis Stream carries every event as a CloudEvents JSON string.
 * Each process reads the stream on its own connection from where it joined (no consumer
 * group), so every replica sees every event, which is what cache invalidation needs.
 */
export function createRedisStreamsBus(opts: {
  source: string;
  stream: string;
  publisher: RedisClient;
  reader: RedisClient;
  onError: (err: unknown) => void;
  maxLen?: number;
}): EventBus & { ready: Promise<void> } {
  const handlers = new HandlerSet(opts.onError);
  let closed = false;
  let lastId = '$';

  const ready = (async () => {
    // Start from the newest entry now, so events published after ready are never missed.
    const newest = (await opts.reader.xrevrange(opts.stream, '+', '-', 'COUNT', 1)) as [string, string[]][];
    lastId = newest[0]?.[0] ?? '0-0';
  })();

  const loop = async () => {
    await ready.catch(opts.onError);
    while (!closed) {
      try {
        const res = (await opts.reader.xread('COUNT', 100, 'BLOCK', 1000, 'STREAMS', opts.stream, lastId)) as
          | [string, [string, string[]][]][]
          | null;
        for (const [, entries] of res ?? []) {
          for (const [id, fields] of entries) {
            lastId = id;
            const payload = fields[1];
            if (payload) await handlers.dispatch(JSON.parse(payload) as CloudEvent);
          }
        }
      } catch (err) {
        if (closed) return;
        opts.onError(err);
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };
  void loop();

  const append = async (event: CloudEvent): Promise<void> => {
    await opts.publisher.xadd(
      opts.stream,
      'MAXLEN',
      '~',
      String(opts.maxLen ?? 100_000),
      '*',
      'event',
      JSON.stringify(event),
    );
  };

  return {
    ready,
    async publish<T>(type: string, data: T, subject?: string) {
      const event = cloudEvent(opts.source, type, data, subject);
      await append(event);
      return event;
    },
    publishEvent: append,
    subscribe: (type, handler) => handlers.add(type, handler),
    async close() {
      closed = true;
      opts.reader.disconnect();
    },
  };
}
