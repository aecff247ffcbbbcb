/**
 * The reading side of count-statements.mjs (preloaded into the server with `--import`): asks the
 * server for its counts so far (SIGUSR2, which writes `{ text: [count, ms] }` to
 * STATEMENT_COUNTS_FILE), and what the store's thread served between two readings.
 */
import { readFileSync } from 'node:fs';

export type StatementCounts = Map<string, readonly [number, number]>;

/** Each statement text's count and the store thread's ms serving it, so far. */
export async function readStatementCounts(pid: number, file: string): Promise<StatementCounts> {
  process.kill(pid, 'SIGUSR2');
  await new Promise((r) => setTimeout(r, 300));
  return new Map(Object.entries(JSON.parse(readFileSync(file, 'utf8')) as Record<string, [number, number]>));
}

/** The statements sent between two readings, with their count and ms, the longest served first. */
export function statementsBetween(
  before: StatementCounts,
  after: StatementCounts,
): { sql: string; n: number; ms: number }[] {
  return [...after]
    .map(([sql, [n, ms]]) => {
      const [n0, ms0] = before.get(sql) ?? [0, 0];
      return { sql, n: n - n0, ms: ms - ms0 };
    })
    .filter((x) => x.n > 0)
    .sort((a, b) => b.ms - a.ms);
}
