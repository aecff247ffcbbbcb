/**
 * The one contract of the event bus: every instance receives every event (fan-out), in the
 * order published, as the CloudEvent that was published. Run against the in-process bus and
 * Redis Streams (event-bus.test.ts) and a Redis Cluster (test/cluster/).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventBus } from '../../lib/events/bus.ts';
import type { CloudEvent } from '../../lib/events/cloudevent.ts';
import { createRedisStreamsBus } from '../../lib/events/redis-streams.ts';
import type { RedisClient } from '../../lib/redis.ts';

export interface BusTopology {
  /** A new instance's bus onto the shared channel, ready to receive. */
  instance(): Promise<EventBus>;
  close(): Promise<void>;
}

async function eventually(check: () => void, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      return check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

export function eventBusContract(label: string, open: () => Promise<BusTopology>): void {
  describe(`EventBus contract: ${label}`, () => {
    let topology: BusTopology;
    beforeAll(async () => {
      topology = await open();
    });
    afterAll(() => topology.close());

    it('delivers every event to every instance, in the order published', async () => {
      const [a, b] = [await topology.instance(), await topology.instance()];
      const seen: Record<'a' | 'b', CloudEvent[]> = { a: [], b: [] };
      a.subscribe('test.Ordered', (e) => void seen.a.push(e));
      b.subscribe('test.Ordered', (e) => void seen.b.push(e));
      const sent: CloudEvent[] = [];
      for (let i = 0; i < 20; i++) sent.push(await (i % 2 ? a : b).publish('test.Ordered', { i }, `s-${i}`));
      await eventually(() => {
        expect(seen.a).toHaveLength(20);
        expect(seen.b).toHaveLength(20);
      });
      expect(seen.a).toEqual(sent);
      expect(seen.b).toEqual(sent);
      expect(sent[3]).toMatchObject({
        specversion: '1.0',
        type: 'test.Ordered',
        subject: 's-3',
        data: { i: 3 },
      });
    });

    it('delivers an event published whole with its own id, unchanged (outbox relay)', async () => {
      const [a, b] = [await topology.instance(), await topology.instance()];
      const seen: CloudEvent[] = [];
      b.subscribe('test.Whole', (e) => void seen.push(e));
      const event: CloudEvent = {
        specversion: '1.0',
        id: 'outbox-row-42',
        source: '/test',
        type: 'test.Whole',
        time: '2026-01-01T00:00:00.000Z',
        datacontenttype: 'application/json',
        subject: 'ord_1',
        data: { amount: '250.75' },
      };
      await a.publishEvent(event);
      await a.publishEvent(event);
      await eventually(() => expect(seen).toHaveLength(2));
      expect(seen).toEqual([event, event]);
    });

    it('delivers by type, stops after unsubscribe, and survives a failing handler', async () => {
      const bus = await topology.instance();
      const got: unknown[] = [];
      bus.subscribe('test.Failing', () => {
        throw new Error('handler failed');
      });
      const off = bus.subscribe('test.Failing', (e) => void got.push(e.data));
      bus.subscribe('test.Other', (e) => void got.push(['other', e.data]));
      await bus.publish('test.Failing', 1);
      await bus.publish('test.Other', 2);
      await eventually(() => expect(got).toEqual([1, ['other', 2]]));
      off();
      await bus.publish('test.Failing', 3);
      await bus.publish('test.Other', 4);
      await eventually(() => expect(got).toEqual([1, ['other', 2], ['other', 4]]));
    });
  });
}

/** Redis Streams on any Redis (single or cluster): each instance reads on its own connection. */
export function streamsTopology(
  connect: (use: 'commands' | 'blocking') => RedisClient,
  stream: string,
): BusTopology {
  const clients: RedisClient[] = [];
  const buses: EventBus[] = [];
  const client = (use: 'commands' | 'blocking') => {
    const c = connect(use);
    clients.push(c);
    return c;
  };
  const publisher = client('commands');
  return {
    async instance() {
      const bus = createRedisStreamsBus({
        source: '/test/bus',
        stream,
        publisher,
        reader: client('blocking'),
        onError: () => {},
      });
      buses.push(bus);
      await bus.ready;
      return bus;
    },
    async close() {
      for (const b of buses) await b.close();
      await publisher.del(stream);
      for (const c of clients) c.disconnect();
    },
  };
}
