/**
 * `npm run catalog:import -- <dir>` against the running system (embedded, its development key),
 * as a merchant runs it: the feed lands, is found by search, and the report names each refused
 * line; a 50 MB line and a file of garbage are refused without being held.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { readLines } from '../../subgraphs/pricing/catalog/feed/lines.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
let sys: TestSystem;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'ac-catalog-cli-'));
  sys = await startEmbedded({ DATA_DIR: dataDir });
}, 120_000);
afterAll(() => sys?.close());

/** Runs the CLI (compiled when the suite built dist/, else from the sources) and collects its output. */
function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const compiled = process.env.TEST_COMPILED === '1';
  const command = compiled ? process.execPath : 'npx';
  const argv = compiled
    ? [join(root, 'dist/scripts/catalog-import.js'), ...args]
    : ['tsx', join(root, 'scripts/catalog-import.ts'), ...args];
  return new Promise((resolve) => {
    execFile(
      command,
      argv,
      { cwd: root, env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent' }, maxBuffer: 10_000_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

function feed(lines: string[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'ac-feed-'));
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'metadata.json'), JSON.stringify({ id: 'feed_cli', target_country: 'US' }));
  writeFileSync(join(dir, 'products.jsonl'), `${lines.join('\n')}\n`);
  return dir;
}

const chair = (n: number, prefix = 'cli-chair') =>
  JSON.stringify({
    id: `${prefix}-${n}`,
    title: `Saddle Stool ${n}`,
    description: { plain: 'A saddle stool for standing desks.' },
    variants: [
      {
        id: `${prefix}-${n}-black`,
        title: `Saddle Stool ${n} - Black`,
        price: { amount: 12900 + n, currency: 'USD' },
        availability: { available: true, status: 'in_stock' },
        categories: [{ value: 'Office > Chairs', taxonomy: 'merchant' }],
      },
    ],
  });

describe('npm run catalog:import', () => {
  it('imports a feed into the running system, which then finds it, and lists the refused lines', async () => {
    const misspelt = `{ searchProducts(input: { query: "saddel stool" }) { totalCount correctedQuery } }`;
    // Searched before the import: what the search learns of the words then is forgotten after it.
    await sys.gql(misspelt);
    const dir = feed([chair(1), chair(2), '{"id": "x"', chair(3)]);
    const r = await cli([dir, '--url', sys.url, '--mode', 'partial']);
    expect(r.stdout).toMatch(/^line 3: \$: not JSON/m);
    expect(r.stdout).toMatch(/DONE: 4 lines read, 3 accepted, 1 refused; 3 created/);
    expect(r.code).toBe(0);
    const found = await sys.gql(
      `{ searchProducts(input: { query: "saddle stool" }) { totalCount nodes { id } } }`,
    );
    expect((found.data?.searchProducts as { totalCount: number } | undefined)?.totalCount).toBe(3);
    expect((await sys.gql(misspelt)).data?.searchProducts).toEqual({
      totalCount: 3,
      correctedQuery: 'saddle stool',
    });
  });

  it('uploads the file in several requests, each continuing from the line after the last read', async () => {
    // --segment-ms 0: each request ends at the first newline, so every line is its own request.
    const dir = feed([chair(1, 'cli-seg'), '{"id": "x"', chair(2, 'cli-seg'), chair(1, 'cli-seg')]);
    const r = await cli([dir, '--url', sys.url, '--mode', 'partial', '--segment-ms', '0']);
    expect(r.stdout).toMatch(/^line 2: \$: not JSON/m);
    expect(r.stdout).toMatch(/^line 4: \$\.id: product cli-seg-1 is on line 1 already/m);
    expect(r.stdout).toMatch(/DONE: 4 lines read, 2 accepted, 2 refused; 2 created/);
    expect(r.code).toBe(0);
  });

  it('sends the file through GraphQL appends with --via graphql (where the upload is not served), with the same report', async () => {
    const dir = feed([chair(1, 'cli-gql'), '{"id": "x"', chair(2, 'cli-gql')]);
    const r = await cli([dir, '--url', sys.url, '--mode', 'partial', '--via', 'graphql']);
    expect(r.stdout).toMatch(/^line 2: \$: not JSON/m);
    expect(r.stdout).toMatch(/DONE: 3 lines read, 2 accepted, 1 refused; 2 created/);
    expect(r.code).toBe(0);
  });

  it('refuses a file of garbage at its first chunk, keeping nothing, and exits 1', async () => {
    // 10^6 lines (19 MB): the server fails the import at its first chunk and stops reading.
    const dir = feed(Array.from({ length: 1_000_000 }, (_, i) => `garbage line ${i}`));
    const r = await cli([dir, '--url', sys.url]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not an ACP product feed/);
  });

  it('names a usage error with exit 2', async () => {
    const r = await cli(['/no/such/dir']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/does not exist/);
  });
});

describe('reading products.jsonl', () => {
  it('yields a 50 MB line as too long without holding it, and the lines around it whole', async () => {
    const mb = Buffer.alloc(1024 * 1024, 0x61);
    async function* source() {
      yield Buffer.from('{"a":1}\r\n');
      for (let i = 0; i < 50; i++) yield mb;
      yield Buffer.from('\n{"b":"\u00e9');
      yield Buffer.from([0xc3]);
      yield Buffer.from([0xa9, 0x22, 0x7d]);
    }
    const out = [];
    for await (const l of readLines(Readable.from(source()), 128 * 1024)) out.push(l);
    expect(out).toEqual([{ text: '{"a":1}' }, { tooLong: true }, { text: '{"b":"éé"}' }]);
  });
});
