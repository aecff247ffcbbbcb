import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { isPrivateAddress } from '../../lib/net/address.ts';
import { guardedLookup } from '../../lib/net/guarded-lookup.ts';
import { newSigningSecret } from '../../subgraphs/procurement/webhooks/secret.ts';
import { httpSender } from '../../subgraphs/procurement/webhooks/sender.ts';
import type { ClaimedDelivery } from '../../subgraphs/procurement/webhooks/types.ts';
import { type Receiver, startReceiver } from './support.ts';

const lookupOf = (host: string, all: boolean) =>
  new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((resolve) =>
    guardedLookup(host, { all }, (err, address) => resolve({ err, address })),
  );

const delivery = (url: string, secret = newSigningSecret()): ClaimedDelivery => ({
  deliveryId: 'whd_0123456789abcdef0123456789abcdef',
  endpointId: 'whe_0123456789abcdef0123456789abcdef',
  eventId: 'evt-sender-1',
  payload: '{"id":"evt-sender-1","data":{"order_id":"ord_1"}}',
  attempt: 1,
  createdAt: new Date(),
  claim: 1,
  url,
  secrets: [secret],
});

let receiver: Receiver | undefined;
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});

// The machine's own name, when it resolves to loopback (/etc/hosts): a name the registration
// check cannot judge, so only the lookup guard stands between it and the server's neighbours.
const own = hostname();
const ownIsPrivate = await lookup(own).then(
  (a) => isPrivateAddress(a.address),
  () => false,
);

describe('the delivery sender', () => {
  it('refuses, at connection time, a host name that resolves to a private address', async () => {
    for (const all of [true, false]) {
      const { err } = await lookupOf('localhost', all);
      expect(err?.code).toBe('EWEBHOOKPRIVATE');
      expect(err?.message).toMatch(/localhost resolves to a private address/);
    }
  });

  it.skipIf(!ownIsPrivate)(
    'does not connect to a name re-pointed to loopback after registration',
    async () => {
      receiver = await startReceiver([200]);
      const url = receiver.url.replace('127.0.0.1', own);
      const guarded = httpSender({ timeoutMs: 2000, allowPrivate: false });
      const open = httpSender({ timeoutMs: 2000, allowPrivate: true });
      try {
        const refused = await guarded.send(delivery(url), new Date());
        expect(refused).toEqual({ error: expect.stringMatching(/EWEBHOOKPRIVATE/) });
        expect(receiver.received).toHaveLength(0);
        // The same request is delivered when private addresses are allowed: the guard made the difference.
        expect(await open.send(delivery(url), new Date())).toEqual({ statusCode: 200 });
        expect(receiver.received).toHaveLength(1);
      } finally {
        await guarded.close();
        await open.close();
      }
    },
  );

  it('posts the exact payload with verifiable Standard Webhooks headers, and reports a refused connection', async () => {
    receiver = await startReceiver([202]);
    const sender = httpSender({ timeoutMs: 2000, allowPrivate: true });
    const secret = newSigningSecret();
    try {
      const d = delivery(receiver.url, secret);
      expect(await sender.send(d, new Date())).toEqual({ statusCode: 202 });
      const [got] = receiver.received;
      expect(got?.body).toBe(d.payload);
      expect(new Webhook(secret).verify(got?.body ?? '', got?.headers as Record<string, string>)).toEqual(
        JSON.parse(d.payload),
      );
      const closedPort = receiver.url;
      await receiver.close();
      receiver = undefined;
      expect(await sender.send(delivery(closedPort), new Date())).toEqual({
        error: expect.stringMatching(/ECONNREFUSED/),
      });
    } finally {
      await sender.close();
    }
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    receiver = await startReceiver(['hang']);
    const sender = httpSender({ timeoutMs: 200, allowPrivate: true });
    try {
      expect(await sender.send(delivery(receiver.url), new Date())).toEqual({ error: 'timed out' });
    } finally {
      await sender.close();
    }
  });
});
