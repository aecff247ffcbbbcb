import { Worker } from 'node:worker_threads';
import type { SpawnStoreThread } from '../../../lib/db/pglite-worker.ts';

/** The store's worker from source: vitest's transform does not reach workers, so tsx's loader is registered first. */
export const workerFromSource: SpawnStoreThread = (module, workerData) =>
  new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(module.href)}, ${JSON.stringify(module.href)}))`,
    { eval: true, workerData },
  );
