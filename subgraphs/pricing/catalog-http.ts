/**
 * The catalog as an ACP product feed over HTTP (catalog/feed/export.ts): what a merchant hands
 * to an agent platform's offline ingestion, or fetches with `curl`. Public, like the catalog:
 *
 *   GET /v1/catalog/feed/metadata.json?currency=USD[&target_country=US]
 *   GET /v1/catalog/feed/products.jsonl?currency=USD    (streamed, one Product per line)
 *
 * A currency that is no ISO 4217 code, or a country that is no ISO 3166-1 alpha-2 code, is 400.
 */
import { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { Clock } from '../../lib/clock.ts';
import type { Db } from '../../lib/db/index.ts';
import { feedMetadata, feedProducts } from './catalog/feed/export.ts';

type FeedQuery = { currency?: unknown; target_country?: unknown };

function parse(q: FeedQuery, reply: FastifyReply): { currency: string; country?: string } | undefined {
  const currency = typeof q.currency === 'string' ? q.currency.toUpperCase() : 'USD';
  const country = typeof q.target_country === 'string' ? q.target_country.toUpperCase() : undefined;
  if (!/^[A-Z]{3}$/.test(currency)) {
    reply.code(400).send({ error: 'currency must be an ISO 4217 code such as USD' });
    return undefined;
  }
  if (country !== undefined && !/^[A-Z]{2}$/.test(country)) {
    reply.code(400).send({ error: 'target_country must be an ISO 3166-1 alpha-2 code such as US' });
    return undefined;
  }
  return { currency, ...(country ? { country } : {}) };
}

/** The feed id of the catalog in a currency. */
export const feedIdOf = (currency: string): string => `catalog-${currency.toLowerCase()}`;

export const catalogFeedRoutes =
  (db: Db, clock: Clock): FastifyPluginAsync =>
  async (app) => {
    app.get<{ Querystring: FeedQuery }>('/v1/catalog/feed/metadata.json', async (req, reply) => {
      const p = parse(req.query, reply);
      if (!p) return reply;
      return reply.type('application/json').send(
        feedMetadata({
          feedId: feedIdOf(p.currency),
          ...(p.country ? { targetCountry: p.country } : {}),
          updatedAt: new Date(clock.now()),
        }),
      );
    });
    app.get<{ Querystring: FeedQuery }>('/v1/catalog/feed/products.jsonl', async (req, reply) => {
      const p = parse(req.query, reply);
      if (!p) return reply;
      async function* lines() {
        for await (const product of feedProducts(db, p?.currency ?? 'USD'))
          yield `${JSON.stringify(product)}\n`;
      }
      return reply.type('application/jsonl; charset=utf-8').send(Readable.from(lines()));
    });
  };
