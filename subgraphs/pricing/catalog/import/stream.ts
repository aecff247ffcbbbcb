/**
 * products.jsonl appended from a stream (the bulk upload, catalog-import-http.ts): the stream's
 * lines are cut into chunks and each chunk is the import's `append` (./service.ts), so a line is
 * judged, staged, refused and reported exactly as through GraphQL. One chunk is held at a time:
 * the next is read only when the last is staged, so a fast sender is held back by TCP
 * (backpressure) and memory stays flat whatever the file's length. A line longer than
 * MAX_LINE_BYTES is not held (feed/lines.ts) and is reported as too long.
 */
import { MAX_LINE_BYTES, readLines } from '../feed/lines.ts';
import { type CatalogImports, ImportNotFound, MAX_APPEND_LINES } from './service.ts';
import type { CatalogImport } from './types.ts';

/**
 * A chunk's size: 2,000 lines or 4 MiB, whichever comes first. Fewer, larger chunks cost fewer
 * transactions and reads of the import (the GraphQL path's ~160 KiB chunks are bound by its
 * 256 KiB body limit, which a stream does not have); a chunk is still a few MiB of memory.
 */
export const STREAM_CHUNK_LINES = Math.min(2000, MAX_APPEND_LINES);
export const STREAM_CHUNK_BYTES = 4 * 1024 * 1024;

/**
 * Appends the lines of `stream` to import `id` from line `firstLine` (1-based; lines the import
 * has read already are skipped, as for `append`). Stops reading when the import is no longer
 * OPEN (a file of garbage FAILS it at once). Returns the import after the last chunk.
 */
export async function appendStream(
  imports: Pick<CatalogImports, 'append' | 'get'>,
  id: string,
  firstLine: number,
  stream: AsyncIterable<Buffer | string>,
): Promise<CatalogImport> {
  let last = await imports.get(id, 0);
  if (!last) throw new ImportNotFound(`no catalog import ${id.slice(0, 64)}`);
  let chunk: string[] = [];
  let oversized: number[] = [];
  let bytes = 0;
  let start = firstLine;
  const flush = async () => {
    if (chunk.length === 0) return;
    last = await imports.append(id, start, chunk, oversized);
    start += chunk.length;
    chunk = [];
    oversized = [];
    bytes = 0;
  };
  for await (const l of readLines(stream, MAX_LINE_BYTES)) {
    if (l.tooLong) oversized.push(start + chunk.length);
    chunk.push(l.tooLong ? '' : l.text);
    bytes += l.tooLong ? 0 : l.text.length;
    if (chunk.length >= STREAM_CHUNK_LINES || bytes >= STREAM_CHUNK_BYTES) {
      await flush();
      if (last.status !== 'OPEN') return last;
    }
  }
  await flush();
  return last;
}
