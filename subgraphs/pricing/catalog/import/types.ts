import type { Clock } from '../../../../lib/clock.ts';
import type { Db } from '../../../../lib/db/index.ts';
import type { Logger } from '../../../../lib/logger.ts';

/** An import's shapes, shared by the service (./service.ts) and its commit (./commit.ts). */

export type ImportMode = 'FULL' | 'PARTIAL';

export type ImportStatus = 'OPEN' | 'COMMITTING' | 'DONE' | 'FAILED' | 'CANCELLED';

export interface ImportLineError {
  readonly line: number;
  readonly path: string;
  readonly reason: string;
}

export interface CatalogImport {
  readonly id: string;
  readonly mode: ImportMode;
  readonly status: ImportStatus;
  readonly feedId: string;
  readonly linesRead: number;
  readonly accepted: number;
  readonly refused: number;
  /** Products written by the commit so far (progress), of `accepted`. */
  readonly committed: number;
  readonly created: number;
  readonly updated: number;
  readonly unchanged: number;
  readonly removed: number;
  /** A full import: whether the products its file did not have were removed. */
  readonly replaced: boolean | null;
  readonly note: string | null;
  readonly startedAt: string;
  readonly finishedAt: string | null;
  /** The first refused lines (at most `errorsLimit` of get, 100 by default). */
  readonly errors: readonly ImportLineError[];
}

export interface ImportDeps {
  readonly db: Db;
  readonly clock: Clock;
  readonly log: Logger;
  /** After a commit changed the catalog: the SKUs changed and removed (events, caches, mirror). */
  readonly changed: (
    importId: string,
    changedSkus: readonly string[],
    removedSkus: readonly string[],
  ) => Promise<void>;
}
