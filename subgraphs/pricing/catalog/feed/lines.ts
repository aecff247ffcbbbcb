/**
 * The lines of a `products.jsonl` stream, each at most `maxBytes` long: a longer line is not
 * held (its bytes are dropped as they come, up to its newline) and is yielded as `tooLong`, so
 * a 50 MB line or a file of one endless line costs no more memory than a normal one. Lines end
 * at `\n` (a `\r` before it is dropped); the last line needs no newline. UTF-8 is decoded per
 * line, so a character split across reads is whole. Written here because readline holds a whole
 * line however long it is.
 */

/**
 * The longest line read (a product is a few kilobytes; a longer line is refused, not held). A
 * line travels in a chunk of at most ~200 KiB (the gateway's GraphQL body limit is 256 KiB).
 * Here, beside the reader, so that the CLI takes it without loading the feed's schema (Ajv).
 */
export const MAX_LINE_BYTES = 128 * 1024;

export type FeedLine = { readonly text: string; readonly tooLong?: false } | { readonly tooLong: true };

export async function* readLines(
  stream: AsyncIterable<Buffer | string>,
  maxBytes: number,
): AsyncGenerator<FeedLine> {
  let parts: Buffer[] = [];
  let held = 0;
  let tooLong = false;
  const end = (): FeedLine => {
    if (tooLong) return { tooLong: true };
    let line = Buffer.concat(parts, held);
    if (line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, line.length - 1);
    return { text: line.toString('utf8') };
  };
  const reset = () => {
    parts = [];
    held = 0;
    tooLong = false;
  };
  for await (const read of stream) {
    let chunk = typeof read === 'string' ? Buffer.from(read, 'utf8') : read;
    for (;;) {
      const nl = chunk.indexOf(0x0a);
      const piece = nl < 0 ? chunk : chunk.subarray(0, nl);
      if (!tooLong) {
        // +1: a line of exactly maxBytes may still carry a `\r` before its newline.
        if (held + piece.length > maxBytes + 1) {
          tooLong = true;
          parts = [];
          held = 0;
        } else {
          parts.push(Buffer.from(piece));
          held += piece.length;
        }
      }
      if (nl < 0) break;
      yield end();
      reset();
      chunk = chunk.subarray(nl + 1);
    }
  }
  if (held > 0 || tooLong) yield end();
}
