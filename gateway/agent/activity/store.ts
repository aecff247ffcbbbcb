import type { ActivityCursor, AgentActivity } from './activity.ts';

/**
 * Agent activity: in memory (embedded) or Redis (distributed: every replica records into and
 * reads the same view). Both adapters run test/procurement/agent-state.contract.ts.
 */
export interface ActivityStore {
  /** One audited call. Never throws and never waits: the Redis adapter writes in batches. */
  record(identity: string, at: number): void;
  /** Resolves when everything recorded so far is stored. */
  flush(): Promise<void>;
  /** Identities by last seen, newest first; `total` is how many are known. */
  page(
    now: number,
    limit: number,
    after?: ActivityCursor,
  ): Promise<{ items: AgentActivity[]; next: ActivityCursor | undefined; total: number }>;
  close(): Promise<void>;
}
