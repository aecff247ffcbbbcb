import { type EventBus, HandlerSet } from './bus.ts';
import { type CloudEvent, cloudEvent } from './cloudevent.ts';

/** Embedded topology: events stay in the process and are delivered after the publisher returns. */
export function createMemoryBus(
  source: string,
  onError: (err: unknown) => void,
): EventBus & { published: number } {
  const handlers = new HandlerSet(onError);
  const bus = {
    published: 0,
    async publish<T>(type: string, data: T, subject?: string) {
      const event = cloudEvent(source, type, data, subject);
      bus.published++;
      queueMicrotask(() => void handlers.dispatch(event));
      return event;
    },
    async publishEvent(event: CloudEvent) {
      bus.published++;
      queueMicrotask(() => void handlers.dispatch(event));
    },
    subscribe: (type: string, handler: Parameters<EventBus['subscribe']>[1]) => handlers.add(type, handler),
    async close() {},
  };
  return bus;
}
