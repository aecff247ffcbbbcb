/**
 * Search latency of the catalog bench (issue 47): the closed-loop maximum of a search server (10
 * connections, after a warm-up), then open loop at 50 % of it (bench/open-loop/generator.ts),
 * each latency from its request's due time. The requests cycle through the labelled queries
 * (every kind: one type, several words, brand plus attribute, typos, filters only).
 *
 * The systems: ours as `npm start` runs it (compiled), on its embedded store or, with
 * DATABASE_URL, on PostgreSQL (a schema seeded beforehand: postgres.ts); the peer (peer.ts) in a
 * process of its own over the same products.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedSystem } from '../../harness/embedded.ts';
import { type ServiceProcess, startCommand } from '../../harness/processes.ts';
import type { HttpRequestSpec } from '../harness.ts';
import { openLoad, type StreamResult } from '../open-loop/generator.ts';
import { closedMax } from '../open-loop/run.ts';
import type { LabelledQuery } from './labels.ts';
import { graphqlRequest, peerRequest } from './relevance.ts';

export interface SearchLoad {
  /** Closed-loop maximum, searches per second. */
  max: number;
  /** Open loop at half of it. */
  half: StreamResult;
}

export async function searchLoad(
  url: string,
  requests: HttpRequestSpec[],
  quick: boolean,
): Promise<SearchLoad> {
  const max = await closedMax(url, requests, quick);
  const r = await openLoad({
    url,
    primary: { requests, rate: Math.max(1, Math.round(max / 2)) },
    seconds: quick ? 3 : 10,
    warmupSeconds: quick ? 1 : 2,
  });
  return { max, half: r.primary };
}

export interface OurSystem {
  sys: ServiceProcess;
  dataDir: string;
}

/** Ours, compiled, on its embedded store, or on PostgreSQL at `databaseUrl`. */
export async function startOurs(databaseUrl?: string): Promise<OurSystem> {
  const dataDir = mkdtempSync(join(tmpdir(), 'ac-catalog-'));
  const sys = await startEmbeddedSystem(undefined, [], {
    DATA_DIR: dataDir,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  return { sys, dataDir };
}

export const ourRequests = (queries: LabelledQuery[]): HttpRequestSpec[] => queries.map(graphqlRequest);

/** The peer over the generated catalog of `size` SKUs, measured, then stopped. */
export async function peerLoad(size: number, queries: LabelledQuery[], quick: boolean): Promise<SearchLoad> {
  const peer = await startCommand(
    'minisearch',
    process.execPath,
    ['--import', 'tsx', 'bench/catalog/peer.ts', String(size)],
    {},
    { timeoutMs: 600_000 },
  );
  try {
    return await searchLoad(peer.url, queries.map(peerRequest), quick);
  } finally {
    await peer.stop();
  }
}
