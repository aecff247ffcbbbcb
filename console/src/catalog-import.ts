/**
 * The Catalog page's import of an ACP product feed, the protocol of `npm run catalog:import`
 * (scripts/catalog-import.ts) in the browser: startCatalogImport, then products.jsonl in chunks
 * through appendCatalogImport (a line longer than the server's limit is sent by number in
 * `oversized`, its text as ""), commitCatalogImport, and catalogImport polled until the commit
 * ends. The file is read as a stream: a line is held only up to the limit, a chunk only up to
 * its size, so a file of any length costs the tab the same memory.
 *
 * The server's reader (subgraphs/pricing/catalog/feed/lines.ts) works on Node Buffers; this is
 * its twin over decoded text, which is what File.stream() + TextDecoderStream gives.
 */
import { operation } from './operations.ts';

export const START_IMPORT: string = operation('StartCatalogImport');
export const APPEND_IMPORT: string = operation('AppendCatalogImport');
export const COMMIT_IMPORT: string = operation('CommitCatalogImport');
export const CANCEL_IMPORT: string = operation('CancelCatalogImport');
export const GET_IMPORT: string = operation('CatalogImport');

/** The server's longest line (MAX_LINE_BYTES of feed/line.ts; test/console/catalog-pure.test.ts keeps them equal). */
export const MAX_LINE_BYTES = 128 * 1024;
/** A chunk's lines, JSON-escaped, stay under this (the gateway's GraphQL body limit is 256 KiB). */
export const CHUNK_BYTES = 160 * 1024;
/** appendCatalogImport takes at most this many lines per call. */
export const CHUNK_LINES = 5000;

/** UTF-8 bytes of a text (a lone surrogate counts 3, as TextEncoder writes U+FFFD). */
export function utf8Bytes(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d < 0xe000) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/** One line of the file and the bytes it took there (its newline included), for the progress bar. */
export type FeedLine = { text: string; tooLong?: false; bytes: number } | { tooLong: true; bytes: number };

/**
 * The lines of a text stream, as the server reads them: lines end at `\n` (a `\r` before it is
 * dropped), the last needs none, and a line longer than `maxBytes` is not held (its text is
 * dropped as it comes) and yielded as `tooLong`.
 */
export async function* feedLines(
  texts: AsyncIterable<string>,
  maxBytes = MAX_LINE_BYTES,
): AsyncGenerator<FeedLine> {
  let parts: string[] = [];
  let held = 0;
  let bytes = 0;
  let tooLong = false;
  let any = false;
  const end = (newline: boolean): FeedLine => {
    const total = bytes + (newline ? 1 : 0);
    if (tooLong) return { tooLong: true, bytes: total };
    let text = parts.join('');
    if (text.endsWith('\r')) text = text.slice(0, -1);
    // A line of exactly maxBytes + 1 bytes held only for its `\r` is still too long without it.
    if (utf8Bytes(text) > maxBytes) return { tooLong: true, bytes: total };
    return { text, bytes: total };
  };
  let carry = '';
  for await (const read of texts) {
    // A character cut between two pieces (a surrogate pair) is counted whole, in the next one.
    let rest = carry + read;
    carry = '';
    const lastUnit = rest.charCodeAt(rest.length - 1);
    if (lastUnit >= 0xd800 && lastUnit < 0xdc00) {
      carry = rest.slice(-1);
      rest = rest.slice(0, -1);
    }
    for (;;) {
      const nl = rest.indexOf('\n');
      const piece = nl < 0 ? rest : rest.slice(0, nl);
      const size = utf8Bytes(piece);
      bytes += size;
      if (piece.length > 0) any = true;
      if (!tooLong) {
        // +1: a line of exactly maxBytes may still carry a `\r` before its newline.
        if (held + size > maxBytes + 1) {
          tooLong = true;
          parts = [];
          held = 0;
        } else {
          parts.push(piece);
          held += size;
        }
      }
      if (nl < 0) break;
      yield end(true);
      parts = [];
      held = 0;
      bytes = 0;
      tooLong = false;
      any = false;
      rest = rest.slice(nl + 1);
    }
  }
  if (carry) {
    const size = utf8Bytes(carry);
    bytes += size;
    any = true;
    if (!tooLong && held + size > maxBytes + 1) tooLong = true;
    else if (!tooLong) parts.push(carry);
  }
  if (any || tooLong) yield end(false);
}

/** One appendCatalogImport call: lines from `firstLine` (1-based), and the file bytes they took. */
export interface FeedChunk {
  firstLine: number;
  lines: string[];
  oversized: number[];
  bytes: number;
}

/**
 * The lines in chunks of at most `chunkLines` lines and about `chunkBytes` bytes as JSON text
 * (a line's escaped size, so quotes and control characters count as sent); a chunk always holds
 * at least one line. A too-long line goes as "" with its number in `oversized`.
 */
export async function* feedChunks(
  lines: AsyncIterable<FeedLine>,
  { chunkBytes = CHUNK_BYTES, chunkLines = CHUNK_LINES } = {},
): AsyncGenerator<FeedChunk> {
  let chunk: FeedChunk = { firstLine: 1, lines: [], oversized: [], bytes: 0 };
  let size = 0;
  for await (const line of lines) {
    const text = line.tooLong ? '' : line.text;
    const cost = utf8Bytes(JSON.stringify(text)) + 1;
    if (chunk.lines.length > 0 && (size + cost > chunkBytes || chunk.lines.length >= chunkLines)) {
      yield chunk;
      chunk = { firstLine: chunk.firstLine + chunk.lines.length, lines: [], oversized: [], bytes: 0 };
      size = 0;
    }
    if (line.tooLong) chunk.oversized.push(chunk.firstLine + chunk.lines.length);
    chunk.lines.push(text);
    chunk.bytes += line.bytes;
    size += cost;
  }
  if (chunk.lines.length > 0) yield chunk;
}

/** A file's text, decoded as it is read (never the whole file in one string). */
export async function* fileText(file: Blob): AsyncGenerator<string> {
  const reader = file.stream().pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

/** What the API says of an import (CatalogImport). */
export interface CatalogImport {
  id: string;
  mode: 'FULL' | 'PARTIAL';
  status: 'OPEN' | 'COMMITTING' | 'DONE' | 'FAILED' | 'CANCELLED';
  feedId: string;
  linesRead: number;
  accepted: number;
  refused: number;
  committed: number;
  created: number;
  updated: number;
  unchanged: number;
  removed: number;
  replaced: boolean | null;
  note: string | null;
  startedAt: string;
  finishedAt: string | null;
  errors?: { line: number; path: string; reason: string }[];
}

/** The import as the page shows it, built from what happened, one event at a time. */
export interface ImportView {
  phase: 'idle' | 'sending' | 'committing' | 'done' | 'failed' | 'cancelled' | 'stopped';
  /** File bytes of the lines the API has taken, and the file's size. */
  sent: number;
  size: number;
  current: CatalogImport | null;
  /** A refusal or failure in words (the API's, or the file's). */
  problem: string | null;
}

export type ImportEvent =
  | { type: 'started'; size: number; current: CatalogImport }
  | { type: 'appended'; bytes: number; current: CatalogImport }
  | { type: 'committing'; current: CatalogImport }
  | { type: 'polled'; current: CatalogImport }
  | { type: 'stopped'; problem: string }
  | { type: 'reset' };

export const IDLE_IMPORT: ImportView = { phase: 'idle', sent: 0, size: 0, current: null, problem: null };

/** The phase an import's status puts the page in. */
function phaseOf(current: CatalogImport, otherwise: ImportView['phase']): ImportView['phase'] {
  if (current.status === 'DONE') return 'done';
  if (current.status === 'FAILED') return 'failed';
  if (current.status === 'CANCELLED') return 'cancelled';
  return otherwise;
}

export function reduceImport(view: ImportView, event: ImportEvent): ImportView {
  switch (event.type) {
    case 'reset':
      return IDLE_IMPORT;
    case 'started':
      return {
        phase: phaseOf(event.current, 'sending'),
        sent: 0,
        size: event.size,
        current: event.current,
        problem: null,
      };
    case 'appended': {
      // Bytes are counted from decoded text: a file with bytes that are not UTF-8 may count more than its size.
      const sent = Math.min(view.size, view.sent + event.bytes);
      return { ...view, phase: phaseOf(event.current, 'sending'), sent, current: event.current };
    }
    case 'committing':
    case 'polled':
      return {
        ...view,
        phase: phaseOf(event.current, 'committing'),
        sent: view.size,
        current: event.current,
      };
    case 'stopped':
      return { ...view, phase: 'stopped', problem: event.problem };
  }
}

/** The two bars: the file sent (bytes), then the accepted products written (the commit). */
export function importProgress(view: ImportView): {
  sent: { value: number; max: number };
  written: { value: number; max: number } | null;
  words: string;
} {
  const c = view.current;
  const sent = { value: view.sent, max: Math.max(view.size, 1) };
  const writing = view.phase === 'committing' || view.phase === 'done';
  const written = writing && c ? { value: c.committed, max: Math.max(c.accepted, 1) } : null;
  const lines = c ? `${c.linesRead} lines read: ${c.accepted} accepted, ${c.refused} refused` : '';
  const words = {
    idle: '',
    sending: `Sending products.jsonl: ${percent(view.sent, view.size)} (${lines})`,
    committing: c ? `Writing products: ${c.committed} of ${c.accepted} (${lines})` : '',
    done: c
      ? `Done: ${lines}; ${c.created} created, ${c.updated} updated, ${c.unchanged} unchanged, ${c.removed} removed`
      : '',
    failed: `Failed${c?.note ? `: ${c.note}` : ''}${c ? ` (${lines})` : ''}`,
    cancelled: `Cancelled${c ? ` (${lines})` : ''}: the catalog is as it was`,
    stopped: `Stopped: ${view.problem ?? ''}`,
  }[view.phase];
  return { sent, written, words };
}

function percent(part: number, whole: number): string {
  return `${whole > 0 ? Math.floor((100 * part) / whole) : 100} %`;
}

/** What an import needs of the world: the API (the page passes its GraphQL call) and a pause. */
export interface ImportDeps {
  graphql<T>(query: string, variables: Record<string, unknown>): Promise<T>;
  sleep(ms: number): Promise<void>;
  /** The text of products.jsonl, piece by piece (fileText of the chosen file). */
  text: AsyncIterable<string>;
  /** Set when the operator cancels: the run stops at its next step and drops the import. */
  cancelled?: () => boolean;
}

/** Refused lines the report lists (the API keeps at most 1,000 for it). */
export const ERRORS_SHOWN = 1000;
const POLL_MS = 250;

/**
 * One import, start to end, reported through `dispatch`. A refusal of the API (a missing role,
 * a metadata.json that is not FeedMetadata) throws its error to the caller; a FAILED import
 * ends the run where it stands.
 */
export async function runImport(
  input: { mode: 'FULL' | 'PARTIAL'; metadata: unknown; size: number },
  deps: ImportDeps,
  dispatch: (e: ImportEvent) => void,
): Promise<CatalogImport> {
  const { startCatalogImport: started } = await deps.graphql<{ startCatalogImport: CatalogImport }>(
    START_IMPORT,
    { input: { mode: input.mode, metadata: input.metadata } },
  );
  dispatch({ type: 'started', size: input.size, current: started });
  const id = started.id;
  let last = started;
  const cancel = async () => {
    last = (await deps.graphql<{ cancelCatalogImport: CatalogImport }>(CANCEL_IMPORT, { id }))
      .cancelCatalogImport;
    dispatch({ type: 'polled', current: last });
    return last;
  };
  for await (const chunk of feedChunks(feedLines(deps.text))) {
    if (deps.cancelled?.()) return cancel();
    last = (
      await deps.graphql<{ appendCatalogImport: CatalogImport }>(APPEND_IMPORT, {
        id,
        firstLine: chunk.firstLine,
        lines: chunk.lines,
        oversized: chunk.oversized.length ? chunk.oversized : null,
      })
    ).appendCatalogImport;
    dispatch({ type: 'appended', bytes: chunk.bytes, current: last });
    if (last.status === 'FAILED') return poll(id, deps, dispatch);
  }
  if (deps.cancelled?.()) return cancel();
  last = (await deps.graphql<{ commitCatalogImport: CatalogImport }>(COMMIT_IMPORT, { id }))
    .commitCatalogImport;
  dispatch({ type: 'committing', current: last });
  return poll(id, deps, dispatch);
}

/** catalogImport until the commit has ended, with the refused lines of the report. */
async function poll(
  id: string,
  deps: ImportDeps,
  dispatch: (e: ImportEvent) => void,
): Promise<CatalogImport> {
  for (;;) {
    const { catalogImport } = await deps.graphql<{ catalogImport: CatalogImport | null }>(GET_IMPORT, {
      id,
      errorsFirst: ERRORS_SHOWN,
    });
    if (!catalogImport) throw new Error(`the API no longer knows import ${id}`);
    dispatch({ type: 'polled', current: catalogImport });
    if (catalogImport.status !== 'COMMITTING') return catalogImport;
    await deps.sleep(POLL_MS);
  }
}
