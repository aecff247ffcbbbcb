import Fastify from 'fastify';
import type { Scenario } from '../harness.ts';

/** The baseline every HTTP group is compared with: a bare Fastify JSON route. */
export async function bareFastify(status = 200, body: unknown = { ok: true }) {
  const app = Fastify();
  app.all('/bare', async (_req, reply) => reply.code(status).send(body));
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url, close: () => app.close() };
}

/**
 * The federated query that spans two subgraphs (issue 2) is the GraphQL cart quote: pricing
 * prices the lines, promotions evaluates them. Its rows, embedded, distributed and on the naive
 * Apollo gateway, are in the `quote` group (bench/scenarios/quote.ts), measured in one run.
 */
export const scenarios: Scenario[] = [
  {
    kind: 'http',
    group: 'foundation',
    name: 'bare Fastify route',
    async setup() {
      const { url, close } = await bareFastify();
      return { url, requests: [{ path: '/bare' }], close };
    },
  },
];
