/**
 * Group commit: writes that arrive while one is running are queued and written together in
 * the next single statement, so throughput grows with load instead of one round trip (or one
 * blocking PGlite call) per row. Every caller's promise settles with its own batch's outcome.
 */
export function groupCommit<T>(
  write: (batch: readonly T[]) => Promise<void>,
  maxBatch = 500,
): (item: T) => Promise<void> {
  let queue: { item: T; resolve(): void; reject(e: unknown): void }[] = [];
  let running = false;

  const drain = async () => {
    while (queue.length > 0) {
      const batch = queue.slice(0, maxBatch);
      queue = queue.slice(batch.length);
      try {
        await write(batch.map((b) => b.item));
        for (const b of batch) b.resolve();
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    running = false;
  };

  return (item) =>
    new Promise<void>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      if (running) return;
      running = true;
      // Wait for the rest of this event-loop turn: the embedded store (PGlite) blocks the loop
      // while it writes, so requests that are ready now must enqueue before the write starts.
      setImmediate(() => void drain());
    });
}
