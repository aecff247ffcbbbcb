/**
 * Group commit: writes that arrive while others are being written are queued and written
 * together in the next single statement, so throughput grows with load instead of one round
 * trip (or one blocking PGlite call) per row. `write` returns one outcome per item, in the
 * batch's order; every caller's promise settles with its own item's outcome, or with the
 * batch's failure. `concurrency` batches may be in flight at once (Postgres has a pool; the
 * embedded store has one connection and takes 1).
 */
export function groupCommit<T, R>(
  write: (batch: readonly T[]) => Promise<readonly R[]>,
  opts: { maxBatch?: number; concurrency?: number } = {},
): (item: T) => Promise<R> {
  const maxBatch = opts.maxBatch ?? 500;
  const concurrency = opts.concurrency ?? 1;
  let queue: { item: T; resolve(r: R): void; reject(e: unknown): void }[] = [];
  let running = 0;
  let scheduled = false;

  const writer = async () => {
    running++;
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      try {
        const outcomes = await write(batch.map((b) => b.item));
        for (const [i, b] of batch.entries()) b.resolve(outcomes[i] as R);
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    running--;
  };

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (running >= concurrency || scheduled) return;
      scheduled = true;
      // Wait for the rest of this event-loop turn: the embedded store (PGlite) blocks the loop
      // while it writes, so requests that are ready now must enqueue before the write starts.
      setImmediate(() => {
        scheduled = false;
        if (running < concurrency) void writer();
      });
    });
}
