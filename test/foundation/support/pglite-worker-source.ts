import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { SpawnStoreThread } from '../../../lib/db/pglite-worker.ts';

/** The store's worker from source: vitest's transform does not reach workers, so tsx's loader is registered first. */
export const workerFromSource: SpawnStoreThread = (module, workerData) =>
  new Worker(
    `import('tsx/esm/api').then(({ tsImport }) => tsImport(${JSON.stringify(module.href)}, ${JSON.stringify(module.href)}))`,
    { eval: true, workerData },
  );

const root = new URL('../../../', import.meta.url);

/**
 * The store's worker as the tests' processes run it: from dist/ when the suite built it
 * (TEST_COMPILED, test/support/global-setup.ts), as production does, else from source. The
 * compiled worker starts on ~0.6 s less CPU (no tsx in the thread, no transpiling).
 */
export const testStoreWorker: SpawnStoreThread = (module, workerData) => {
  const compiled = new URL(`dist/${module.href.slice(root.href.length).replace(/\.ts$/, '.js')}`, root);
  return process.env.TEST_COMPILED === '1' && existsSync(fileURLToPath(compiled))
    ? new Worker(compiled, { workerData })
    : workerFromSource(module, workerData);
};
