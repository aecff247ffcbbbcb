/**
 * The Catalog page's pure parts: the feed's lines and chunks as the browser sends them (checked
 * against the server's own reader), the search state as the API's input, and the import's
 * progress built from its events (and a whole run against a fake API).
 */
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  APPEND_IMPORT,
  type CatalogImport,
  CHUNK_BYTES,
  COMMIT_IMPORT,
  type FeedLine,
  feedChunks,
  feedLines,
  GET_IMPORT,
  IDLE_IMPORT,
  type ImportEvent,
  importProgress,
  MAX_LINE_BYTES,
  reduceImport,
  runImport,
  START_IMPORT,
  utf8Bytes,
} from '../../console/src/catalog-import.ts';
import {
  activeFilters,
  type CatalogSearch,
  EMPTY_CATALOG_SEARCH,
  hasCriteria,
  isPicked,
  SEARCH_PRODUCTS,
  searchInput,
  searchVariables,
  toggleFacet,
} from '../../console/src/catalog-search.ts';
import { MAX_LINE_BYTES as SERVER_MAX_LINE_BYTES } from '../../subgraphs/pricing/catalog/feed/line.ts';
import { readLines } from '../../subgraphs/pricing/catalog/feed/lines.ts';

async function* pieces(text: string, cuts: number[]): AsyncGenerator<string> {
  let at = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    if (cut <= at || cut >= text.length) continue;
    yield text.slice(at, cut);
    at = cut;
  }
  yield text.slice(at);
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

const view = (l: { text?: string; tooLong?: boolean }) => (l.tooLong ? { tooLong: true } : { text: l.text });

describe('feedLines (products.jsonl read in the browser)', () => {
  it('keeps the server limit', () => {
    expect(MAX_LINE_BYTES).toBe(SERVER_MAX_LINE_BYTES);
  });

  it("splits at \\n, drops a \\r before it, keeps a last line without newline, counts each line's bytes", async () => {
    const lines = await collect(feedLines(pieces('{"a":1}\r\n\n{"é":2}\n{"b":3}', [3, 9, 12])));
    expect(lines).toEqual([
      { text: '{"a":1}', bytes: 9 },
      { text: '', bytes: 1 },
      { text: '{"é":2}', bytes: 9 },
      { text: '{"b":3}', bytes: 7 },
    ]);
  });

  it('marks a line over the limit too long without holding it, and goes on', async () => {
    const long = 'x'.repeat(50);
    const lines = await collect(feedLines(pieces(`ok\n${long}\nafter\n`, [5, 20, 40]), 10));
    expect(lines).toEqual([
      { text: 'ok', bytes: 3 },
      { tooLong: true, bytes: 51 },
      { text: 'after', bytes: 6 },
    ]);
  });

  it('reads exactly what the server reader reads, however the text is cut (fast-check)', async () => {
    const line = fc.oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('x'.repeat(16), `${'é'.repeat(8)}\r`, 'x'.repeat(17), '🙂🙂🙂🙂', '\r'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 12 }),
        fc.boolean(),
        fc.array(fc.nat({ max: 400 }), { maxLength: 8 }),
        async (ls, trailing, cuts) => {
          const text = ls.join('\n') + (trailing && ls.length ? '\n' : '');
          const ours = (await collect(feedLines(pieces(text, cuts), 16))).map(view);
          const server = (await collect(readLines(Readable.from([Buffer.from(text, 'utf8')]), 16))).map(
            (l) => (l.tooLong ? { tooLong: true } : { text: l.text }),
          );
          // The server sends a line of 17 bytes held for a \r it did not have; it refuses it as too long.
          const judged = server.map((l) =>
            'text' in l && utf8Bytes(l.text ?? '') > 16 ? { tooLong: true } : l,
          );
          expect(ours).toEqual(judged);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts UTF-8 bytes as TextEncoder does (fast-check)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        expect(utf8Bytes(s)).toBe(new TextEncoder().encode(s).length);
      }),
    );
  });
});

describe('feedChunks (appendCatalogImport calls)', () => {
  const lines = (ls: FeedLine[]) =>
    (async function* () {
      yield* ls;
    })();

  it('numbers chunks from line 1, sends a too-long line as "" with its number in oversized', async () => {
    const chunks = await collect(
      feedChunks(
        lines([
          { text: 'a', bytes: 2 },
          { tooLong: true, bytes: 500 },
          { text: 'b', bytes: 2 },
          { text: 'c', bytes: 2 },
          { tooLong: true, bytes: 900 },
        ]),
        { chunkLines: 2 },
      ),
    );
    expect(chunks).toEqual([
      { firstLine: 1, lines: ['a', ''], oversized: [2], bytes: 502 },
      { firstLine: 3, lines: ['b', 'c'], oversized: [], bytes: 4 },
      { firstLine: 5, lines: [''], oversized: [5], bytes: 900 },
    ]);
  });

  it('keeps every chunk under the byte budget as JSON text, and loses or reorders no line (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ maxLength: 40 }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 7 }),
        async (texts, chunkLines) => {
          const chunkBytes = 64;
          const chunks = await collect(
            feedChunks(lines(texts.map((text) => ({ text, bytes: utf8Bytes(text) + 1 }))), {
              chunkBytes,
              chunkLines,
            }),
          );
          expect(chunks.flatMap((c) => c.lines)).toEqual(texts);
          let next = 1;
          for (const c of chunks) {
            expect(c.firstLine).toBe(next);
            next += c.lines.length;
            expect(c.lines.length).toBeGreaterThan(0);
            expect(c.lines.length).toBeLessThanOrEqual(chunkLines);
            if (c.lines.length > 1)
              expect(utf8Bytes(JSON.stringify(c.lines))).toBeLessThanOrEqual(chunkBytes + 1);
          }
        },
      ),
    );
  });

  it('fits a chunk of the largest lines under the gateway body limit (256 KiB)', async () => {
    const big = 'x'.repeat(MAX_LINE_BYTES);
    const chunks = await collect(
      feedChunks(lines([big, big, big].map((text) => ({ text, bytes: text.length + 1 })))),
    );
    expect(chunks.map((c) => c.lines.length)).toEqual([1, 1, 1]);
    expect(CHUNK_BYTES).toBeLessThan(256 * 1024 - 1024);
  });
});

describe('the search as the API input (ProductSearchInput)', () => {
  const s = (over: Partial<CatalogSearch>): CatalogSearch => ({ ...EMPTY_CATALOG_SEARCH, ...over });

  it('sends the persisted SearchProducts', () => {
    expect(SEARCH_PRODUCTS).toMatch(/^query SearchProducts\(/);
  });

  it.each([
    ['nothing: no criteria', s({}), {}],
    ['the text trimmed', s({ query: '  ergnomic chair ' }), { query: 'ergnomic chair' }],
    ['blank text is no query', s({ query: '   ' }), {}],
    [
      'a price bound in the currency, upper-cased, as typed',
      s({ currency: 'eur', maxPrice: ' 300 ' }),
      { price: { currency: 'EUR', maxDecimal: '300' } },
    ],
    [
      'both bounds',
      s({ minPrice: '25', maxPrice: '49.99' }),
      { price: { currency: 'USD', minDecimal: '25', maxDecimal: '49.99' } },
    ],
    ['availability', s({ availableOnly: true }), { availableOnly: true }],
    [
      'lists and options, empty ones left out',
      s({
        categories: ['Office > Chairs'],
        brands: ['Ergoline'],
        options: [
          { name: 'color', values: ['black', 'grey'] },
          { name: 'size', values: [] },
        ],
      }),
      {
        categories: ['Office > Chairs'],
        brands: ['Ergoline'],
        options: [{ name: 'color', values: ['black', 'grey'] }],
      },
    ],
  ])('%s', (_name, search, input) => {
    expect(searchInput(search)).toEqual(input);
    expect(hasCriteria(search)).toBe(Object.keys(input).length > 0);
  });

  it('pages by cursor with the same input, and prices ranges in the chosen currency', () => {
    expect(searchVariables(s({ query: 'desk', currency: 'eur' }), 'c1')).toEqual({
      input: { query: 'desk' },
      first: 20,
      after: 'c1',
      currency: 'EUR',
    });
  });

  it('turns a facet on when clicked, off when clicked again, and lists it as an active filter', () => {
    const picks = [
      { kind: 'category', value: 'Office > Chairs' },
      { kind: 'brand', value: 'Ergoline' },
      { kind: 'condition', value: 'new' },
      { kind: 'option', name: 'color', value: 'black' },
      { kind: 'available' },
      { kind: 'price', minDecimal: '100', maxDecimal: '249.99' },
      { kind: 'price', minDecimal: '1000', maxDecimal: null },
    ] as const;
    for (const pick of picks) {
      const base = s({ query: 'chair' });
      const on = toggleFacet(base, pick);
      expect(isPicked(on, pick)).toBe(true);
      expect(hasCriteria(on)).toBe(true);
      expect(activeFilters(on).map((f) => f.pick)).toContainEqual(pick);
      const off = toggleFacet(on, pick);
      expect(isPicked(off, pick)).toBe(false);
      expect(searchInput(off)).toEqual({ query: 'chair' });
    }
  });

  it('ORs values of one option and ANDs options', () => {
    let x = toggleFacet(s({}), { kind: 'option', name: 'color', value: 'black' });
    x = toggleFacet(x, { kind: 'option', name: 'color', value: 'grey' });
    x = toggleFacet(x, { kind: 'option', name: 'size', value: 'l' });
    expect(searchInput(x).options).toEqual([
      { name: 'color', values: ['black', 'grey'] },
      { name: 'size', values: ['l'] },
    ]);
    x = toggleFacet(x, { kind: 'option', name: 'color', value: 'black' });
    expect(searchInput(x).options).toEqual([
      { name: 'color', values: ['grey'] },
      { name: 'size', values: ['l'] },
    ]);
  });
});

const imp = (over: Partial<CatalogImport>): CatalogImport => ({
  id: 'imp_1',
  mode: 'PARTIAL',
  status: 'OPEN',
  feedId: 'feed',
  linesRead: 0,
  accepted: 0,
  refused: 0,
  committed: 0,
  created: 0,
  updated: 0,
  unchanged: 0,
  removed: 0,
  replaced: null,
  note: null,
  startedAt: '2026-01-01T00:00:00Z',
  finishedAt: null,
  ...over,
});

describe('the import progress (reduceImport, importProgress)', () => {
  it('goes from the bytes sent to the products written, then done with the report', () => {
    const events: ImportEvent[] = [
      { type: 'started', size: 100, current: imp({}) },
      { type: 'appended', bytes: 60, current: imp({ linesRead: 3, accepted: 2, refused: 1 }) },
    ];
    let v = events.reduce(reduceImport, IDLE_IMPORT);
    expect(v.phase).toBe('sending');
    expect(importProgress(v).sent).toEqual({ value: 60, max: 100 });
    expect(importProgress(v).written).toBeNull();
    expect(importProgress(v).words).toBe(
      'Sending products.jsonl: 60 % (3 lines read: 2 accepted, 1 refused)',
    );

    v = reduceImport(v, {
      type: 'appended',
      bytes: 70,
      current: imp({ linesRead: 5, accepted: 4, refused: 1 }),
    });
    expect(v.sent).toBe(100); // never past the file's size
    v = reduceImport(v, {
      type: 'committing',
      current: imp({ status: 'COMMITTING', linesRead: 5, accepted: 4, refused: 1, committed: 1 }),
    });
    expect(importProgress(v).written).toEqual({ value: 1, max: 4 });
    expect(importProgress(v).words).toMatch(/^Writing products: 1 of 4/);
    v = reduceImport(v, {
      type: 'polled',
      current: imp({
        status: 'DONE',
        linesRead: 5,
        accepted: 4,
        refused: 1,
        committed: 4,
        created: 4,
        errors: [{ line: 3, path: '$', reason: 'not JSON' }],
      }),
    });
    expect(v.phase).toBe('done');
    expect(importProgress(v).written).toEqual({ value: 4, max: 4 });
    expect(importProgress(v).words).toBe(
      'Done: 5 lines read: 4 accepted, 1 refused; 4 created, 0 updated, 0 unchanged, 0 removed',
    );
  });

  it('ends FAILED with the API note, and stopped with a refusal in words', () => {
    const failed = reduceImport(reduceImport(IDLE_IMPORT, { type: 'started', size: 10, current: imp({}) }), {
      type: 'appended',
      bytes: 10,
      current: imp({ status: 'FAILED', note: 'not an ACP product feed', refused: 9, linesRead: 9 }),
    });
    expect(failed.phase).toBe('failed');
    expect(importProgress(failed).words).toMatch(/^Failed: not an ACP product feed/);
    const stopped = reduceImport(IDLE_IMPORT, { type: 'stopped', problem: 'requires catalog:admin' });
    expect(importProgress(stopped).words).toBe('Stopped: requires catalog:admin');
  });
});

describe('runImport against a fake API (the CLI protocol)', () => {
  it('starts, appends numbered chunks with the oversized line by number, commits, polls until DONE', async () => {
    const calls: { query: string; variables: Record<string, unknown> }[] = [];
    let polls = 0;
    const graphql = async <T>(query: string, variables: Record<string, unknown>): Promise<T> => {
      calls.push({ query, variables });
      if (query === START_IMPORT) return { startCatalogImport: imp({}) } as T;
      if (query === APPEND_IMPORT) return { appendCatalogImport: imp({ linesRead: 3 }) } as T;
      if (query === COMMIT_IMPORT) return { commitCatalogImport: imp({ status: 'COMMITTING' }) } as T;
      if (query === GET_IMPORT)
        return { catalogImport: imp({ status: ++polls < 3 ? 'COMMITTING' : 'DONE', committed: polls }) } as T;
      throw new Error(`unexpected ${query}`);
    };
    const text = `{"a":1}\n${'y'.repeat(MAX_LINE_BYTES + 10)}\n{"b":2}\n`;
    const events: ImportEvent[] = [];
    const done = await runImport(
      { mode: 'PARTIAL', metadata: { id: 'f' }, size: text.length },
      { graphql, sleep: async () => {}, text: pieces(text, [4, 5000, 70000]) },
      (e) => events.push(e),
    );
    expect(done.status).toBe('DONE');
    expect(calls.map((c) => c.query)).toEqual([
      START_IMPORT,
      APPEND_IMPORT,
      COMMIT_IMPORT,
      GET_IMPORT,
      GET_IMPORT,
      GET_IMPORT,
    ]);
    expect(calls[0]?.variables).toEqual({ input: { mode: 'PARTIAL', metadata: { id: 'f' } } });
    expect(calls[1]?.variables).toEqual({
      id: 'imp_1',
      firstLine: 1,
      lines: ['{"a":1}', '', '{"b":2}'],
      oversized: [2],
    });
    expect(calls[3]?.variables).toEqual({ id: 'imp_1', errorsFirst: 1000 });
    const final = events.reduce(reduceImport, IDLE_IMPORT);
    expect(final.phase).toBe('done');
    expect(final.sent).toBe(text.length);
  });

  it('cancels an open import when asked, and sends no commit', async () => {
    const queries: string[] = [];
    const graphql = async <T>(query: string): Promise<T> => {
      queries.push(query);
      if (query === START_IMPORT) return { startCatalogImport: imp({}) } as T;
      return { cancelCatalogImport: imp({ status: 'CANCELLED' }) } as T;
    };
    const done = await runImport(
      { mode: 'FULL', metadata: {}, size: 3 },
      { graphql, sleep: async () => {}, text: pieces('{}\n', []), cancelled: () => true },
      () => {},
    );
    expect(done.status).toBe('CANCELLED');
    expect(queries).not.toContain(COMMIT_IMPORT);
    expect(queries).not.toContain(APPEND_IMPORT);
  });
});
