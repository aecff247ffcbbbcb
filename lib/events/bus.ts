import type { CloudEvent } from './cloudevent.ts';

export type EventHandler = (event: CloudEvent) => void | Promise<void>;

/**
 * Publish/subscribe of CloudEvents. Every subscribed instance receives every event (fan-out):
 * cache invalidation and rule recompilation must happen in all replicas, not one of them.
 */
export interface EventBus {
  publish<T>(type: string, data: T, subject?: string): Promise<CloudEvent<T>>;
  /**
   * Publishes an event built elsewhere, its id included: a transactional outbox relays the
   * same stored event again after a crash, and consumers deduplicate on that id.
   */
  publishEvent(event: CloudEvent): Promise<void>;
  /** Returns an unsubscribe function. */
  subscribe(type: string, handler: EventHandler): () => void;
  close(): Promise<void>;
}

/** Local dispatch shared by both adapters; a failing handler is logged, never thrown back. */
export class HandlerSet {
  private readonly handlers = new Map<string, Set<EventHandler>>();
  constructor(private readonly onError: (err: unknown, event: CloudEvent) => void) {}

  add(type: string, handler: EventHandler): () => void {
    const set = this.handlers.get(type) ?? new Set<EventHandler>();
    this.handlers.set(type, set);
    set.add(handler);
    return () => set?.delete(handler);
  }

  async dispatch(event: CloudEvent): Promise<void> {
    const set = this.handlers.get(event.type);
    if (!set) return;
    for (const handler of set) {
      try {
        await handler(event);
      } catch (err) {
        this.onError(err, event);
      }
    }
  }
}
