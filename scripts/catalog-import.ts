/**
 * `npm run catalog:import -- <dir>`: imports a merchant's ACP product feed (`<dir>/metadata.json`
 * and `<dir>/products.jsonl`, one Product per line) into the running system: the import opened and
 * committed through its GraphQL mutations (startCatalogImport, commitCatalogImport; role
 * catalog:admin), the file uploaded as one streamed body in between, so every instance's caches
 * follow. The file is streamed: memory stays flat however long it is.
 *
 *   npm run catalog:import -- ./feed                      full import (the feed replaces the catalog)
 *   npm run catalog:import -- ./feed --mode partial       create or update the feed's products only
 *   options: --url http://127.0.0.1:8080 (the gateway; PUBLIC_BASE_URL, else PORT, by default)
 *            --segment-ms 5000: how long one upload request sends before the next continues it
 *            --via upload|graphql: the file as one streamed body (POST /v1/catalog/imports/{id}/products,
 *              the default; where it is not served, as at a distributed gateway, the appends) or
 *              GraphQL appends of ~160 KiB
 *            --token <jwt> (else CATALOG_TOKEN, else a development token from DATA_DIR's dev key)
 *
 * Exit 0 when the import is DONE (refused lines are listed, the import still commits the rest),
 * 1 when it FAILED or was refused, 2 on a usage or connection error.
 */
import '../lib/source-maps.ts';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { mintDevToken } from '../lib/auth/jwt.ts';
import { loadConfig } from '../lib/config.ts';
import { publicOrigin } from '../lib/public-origin.ts';
// lines.ts, not line.ts: the line judge's schema (Ajv) is the server's to load, not this command's.
import { MAX_LINE_BYTES, readLines } from '../subgraphs/pricing/catalog/feed/lines.ts';
import { post, type Reply } from './catalog-import-http.ts';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    mode: { type: 'string', default: 'full' },
    url: { type: 'string' },
    token: { type: 'string' },
    'chunk-bytes': { type: 'string', default: String(160 * 1024) },
    via: { type: 'string', default: 'upload' },
    'segment-ms': { type: 'string', default: '5000' },
  },
});

const usage = (message: string): never => {
  console.error(
    `${message}\nusage: npm run catalog:import -- <dir with metadata.json and products.jsonl> [--mode full|partial] [--url …] [--token …]`,
  );
  process.exit(2);
};

const dir = positionals[0] ?? usage('no feed directory given');
const mode = values.mode?.toUpperCase();
if (mode !== 'FULL' && mode !== 'PARTIAL') usage(`--mode is full or partial, not ${values.mode}`);
if (values.via !== 'upload' && values.via !== 'graphql')
  usage(`--via is upload or graphql, not ${values.via}`);
const metadataFile = join(dir, 'metadata.json');
const productsFile = join(dir, 'products.jsonl');
for (const f of [metadataFile, productsFile]) if (!existsSync(f)) usage(`${f} does not exist`);
let metadata: unknown;
try {
  metadata = JSON.parse(readFileSync(metadataFile, 'utf8'));
} catch (err) {
  usage(`${metadataFile} is not JSON: ${(err as Error).message}`);
}

const config = loadConfig();
const url = (values.url ?? publicOrigin(config)).replace(/\/+$/, '');
const token =
  values.token ??
  process.env.CATALOG_TOKEN ??
  (config.AUTH_JWKS_URL
    ? usage('AUTH_JWKS_URL is set: pass a token from your identity provider (--token or CATALOG_TOKEN)')
    : await mintDevToken(config, { subject: 'catalog-import', roles: ['catalog:admin'], ttlSeconds: 3600 }));

const FIELDS =
  'id status linesRead accepted refused committed created updated unchanged removed replaced note errors { line path reason }';
type Import = {
  id: string;
  status: string;
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
  errors: { line: number; path: string; reason: string }[];
};

async function gql<T>(query: string, variables: Record<string, unknown>): Promise<T> {
  let res: Reply;
  try {
    res = await post(
      `${url}/graphql`,
      { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      JSON.stringify({ query, variables }),
    );
  } catch (err) {
    console.error(`cannot reach ${url}: ${(err as Error).message} (is the system running? npm start)`);
    process.exit(2);
  }
  let body: { data?: T; errors?: { message: string; extensions?: { code?: string } }[] };
  try {
    body = JSON.parse(res.text);
  } catch {
    body = { errors: [{ message: res.text.slice(0, 200) }] };
  }
  if (body.errors?.length) {
    console.error(
      `refused: ${body.errors.map((e) => `${e.message} (${e.extensions?.code ?? res.status})`).join('; ')}`,
    );
    process.exit(1);
  }
  return body.data as T;
}

const started = await gql<{ startCatalogImport: Import }>(
  `mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { ${FIELDS} } }`,
  { input: { mode, metadata } },
);
const id = started.startCatalogImport.id;
console.error(`import ${id} (${mode.toLowerCase()}) of ${productsFile}`);

/**
 * products.jsonl as one streamed body (POST /v1/catalog/imports/{id}/products): the server reads
 * it as it comes, a chunk of lines at a time, holding the sender back in between. Undefined when
 * that route is not served at `url` (a gateway of the distributed topology: it is the pricing
 * process's), which an empty upload finds out first.
 */
/**
 * The file goes in segments of about 5 s of sending, each cut after a line and continued by the
 * next request from the line after the last one read: the server cuts off a request that takes
 * longer than HTTP_REQUEST_TIMEOUT_MS (30 s by default) with 408, and a million products take
 * minutes.
 */
const SEGMENT_MS = Number(values['segment-ms']);

async function upload(): Promise<Import | undefined> {
  const target = `${url}/v1/catalog/imports/${encodeURIComponent(id)}/products`;
  const send = async (body: string | Readable, firstLine = 1) => {
    try {
      const res = await post(
        `${target}?first_line=${firstLine}`,
        { 'content-type': 'application/jsonl', authorization: `Bearer ${token}` },
        body,
      );
      let parsed: Import & { error?: string };
      try {
        parsed = JSON.parse(res.text);
      } catch {
        parsed = { error: res.text.slice(0, 200) } as Import & { error?: string };
      }
      return { status: res.status, body: parsed };
    } catch (err) {
      console.error(`cannot upload to ${url}: ${(err as Error).message} (is the system running? npm start)`);
      process.exit(2);
    }
  };
  const probe = await send('');
  if (probe.status === 404 && !String(probe.body.error).startsWith('no catalog import')) return undefined;
  const size = statSync(productsFile).size;
  const file = (createReadStream(productsFile) as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  let rest: Buffer | undefined;
  let sent = 0;
  let shown = 0;
  /** The file from where the last segment ended, to the first newline after SEGMENT_MS (the server still reads what is in flight, a chunk or two: a few seconds). */
  async function* segment() {
    const until = Date.now() + SEGMENT_MS;
    for (;;) {
      const next = rest ?? (await file.next()).value;
      rest = undefined;
      if (next === undefined) return;
      const nl = Date.now() >= until ? next.indexOf(0x0a) : -1;
      const piece = nl < 0 ? next : next.subarray(0, nl + 1);
      if (nl >= 0 && nl + 1 < next.length) rest = next.subarray(nl + 1);
      sent += piece.length;
      if (sent - shown >= 16 * 1024 * 1024 || sent === size) {
        shown = sent;
        process.stderr.write(`\r  sent ${Math.round((100 * sent) / Math.max(size, 1))} % of ${productsFile}`);
      }
      yield piece;
      if (nl >= 0) return;
    }
  }
  let last = probe.body;
  while (sent < size) {
    const { status, body } = await send(Readable.from(segment()), last.linesRead + 1);
    if (status !== 200) {
      console.error(`\nrefused: ${body.error ?? 'no answer'} (${status})`);
      process.exit(1);
    }
    last = body;
    if (last.status !== 'OPEN') break;
  }
  process.stderr.write('\n');
  return last;
}

const APPEND = `mutation($id: ID!, $firstLine: Int!, $lines: [String!]!, $oversized: [Int!]) {
  appendCatalogImport(id: $id, firstLine: $firstLine, lines: $lines, oversized: $oversized) { ${FIELDS} } }`;

/** The file a chunk at a time through GraphQL appends (each under its 256 KiB body limit). */
async function appendAll(): Promise<Import> {
  const limit = Number(values['chunk-bytes']);
  let chunk: string[] = [];
  let oversized: number[] = [];
  let bytes = 0;
  let firstLine = 1;
  let last = started.startCatalogImport;
  const flush = async () => {
    if (chunk.length === 0) return;
    last = (await gql<{ appendCatalogImport: Import }>(APPEND, { id, firstLine, lines: chunk, oversized }))
      .appendCatalogImport;
    process.stderr.write(
      `\r  read ${last.linesRead} lines: ${last.accepted} accepted, ${last.refused} refused`,
    );
    firstLine += chunk.length;
    chunk = [];
    oversized = [];
    bytes = 0;
  };
  for await (const l of readLines(createReadStream(productsFile), MAX_LINE_BYTES)) {
    const size = l.tooLong ? 0 : Buffer.byteLength(l.text, 'utf8') + 8;
    if (chunk.length > 0 && (bytes + size > limit || chunk.length >= 5000)) await flush();
    if (last.status === 'FAILED') return last;
    if (l.tooLong) oversized.push(firstLine + chunk.length);
    chunk.push(l.tooLong ? '' : l.text);
    bytes += size;
  }
  await flush();
  process.stderr.write('\n');
  return last;
}

let last = (values.via === 'graphql' ? undefined : await upload()) ?? (await appendAll());
console.error(`  read ${last.linesRead} lines: ${last.accepted} accepted, ${last.refused} refused`);
if (last.status === 'FAILED') {
  console.error(`failed: ${last.note}`);
  process.exit(1);
}

await gql(`mutation($id: ID!) { commitCatalogImport(id: $id) { id status } }`, { id });
// Polled without the refused lines (errorsFirst: 0 reads none), which are read once at the end.
const poll = (errorsFirst: number) =>
  gql<{ catalogImport: Import }>(
    `query($id: ID!, $errorsFirst: Int) { catalogImport(id: $id, errorsFirst: $errorsFirst) { ${FIELDS} } }`,
    { id, errorsFirst },
  ).then((d) => d.catalogImport);
// A commit of a few thousand products takes a second or two, and of a few products tens of
// milliseconds: polled after 10 ms, then twice as long each time up to every 100 ms (a poll
// every 100 ms from the start kept a small import waiting most of that; every 250 ms added
// 125 ms to the command on average).
for (let wait = 10; ; wait = Math.min(100, 2 * wait)) {
  await new Promise((r) => setTimeout(r, wait));
  last = await poll(0);
  process.stderr.write(`\r  committing: ${last.committed} of ${last.accepted} products`);
  if (last.status !== 'COMMITTING') break;
}
if (last.refused > 0) last = await poll(1000);
process.stderr.write('\n');
for (const e of last.errors) console.log(`line ${e.line}: ${e.path}: ${e.reason}`);
if (last.refused > last.errors.length)
  console.log(`… and ${last.refused - last.errors.length} more refused lines`);
console.log(
  `${last.status}: ${last.linesRead} lines read, ${last.accepted} accepted, ${last.refused} refused; ${last.created} created, ${last.updated} updated, ${last.unchanged} unchanged, ${last.removed} removed${last.note ? `\n${last.note}` : ''}`,
);
process.exit(last.status === 'DONE' ? 0 : 1);
