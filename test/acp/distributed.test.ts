/**
 * ACP on the distributed topology: pricing, promotions and procurement in their own processes,
 * two gateway replicas (consecutive steps alternate between them), Redis and PostgreSQL. The
 * checkout suite over REST, then the MCP tools across the replicas.
 *
 * One topology for both suites, one after another: each started its own before, and a topology's
 * start is most of what they cost (5 processes, ~16 s of CPU; README "How long it takes"). The
 * checkout suite runs first: it counts the sessions stored.
 */
import pg from 'pg';
import { afterAll } from 'vitest';
import { sharedDistributed } from '../../harness/distributed.ts';
import { acpCheckoutSuite } from './checkout.suite.ts';
import { acpMcpSuite } from './mcp.distributed.suite.ts';

const distributed = sharedDistributed({ label: 'acp' });
const topology = distributed.get;
afterAll(distributed.close, 60_000);

acpCheckoutSuite('distributed', async () => {
  const sys = await topology();
  const db = new pg.Client({ connectionString: sys.env.DATABASE_URL });
  await db.connect();
  return {
    urls: sys.gateways,
    gql: sys.gql,
    token: sys.token,
    sessions: async () =>
      Number((await db.query<{ n: string }>('SELECT count(*) AS n FROM checkout_sessions')).rows[0]?.n),
    // The topology stays up for the MCP suite.
    close: () => db.end(),
  };
});
acpMcpSuite(topology);
