/**
 * The catalog import's bulk upload (POST /v1/catalog/imports/{id}/products, the command's path)
 * on the running system: the GraphQL append's role, the same per-line judgement and report, a
 * retry skipping what was read, and the hostile files (a 50 MB line, 10^6 lines of garbage,
 * duplicate ids) refused line by line or as a whole without being held, nothing half-imported.
 */
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import type { CatalogImport } from '../../subgraphs/pricing/catalog/import/types.ts';

let sys: TestSystem;
let admin: string;

beforeAll(async () => {
  sys = await startEmbedded();
  admin = await sys.token(['catalog:admin']);
}, 120_000);
afterAll(() => sys?.close());

/** The fields this file reads of an import (the domain's, as GraphQL and the upload route answer them). */
type Import = Pick<
  CatalogImport,
  'id' | 'status' | 'linesRead' | 'accepted' | 'refused' | 'created' | 'errors'
>;

const FIELDS = 'id status linesRead accepted refused created errors { line path reason }';

async function start(): Promise<string> {
  const r = await sys.gql(
    `mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { id } }`,
    {
      token: admin,
      variables: { input: { mode: 'PARTIAL', metadata: { id: 'feed_upload', target_country: 'US' } } },
    },
  );
  const started = r.data?.startCatalogImport as { id: string } | undefined;
  if (!started) throw new Error(JSON.stringify(r.errors));
  return started.id;
}

async function commit(id: string): Promise<Import> {
  await sys.gql(`mutation($id: ID!) { commitCatalogImport(id: $id) { id } }`, {
    token: admin,
    variables: { id },
  });
  for (;;) {
    const r = await sys.gql(`query($id: ID!) { catalogImport(id: $id) { ${FIELDS} } }`, {
      token: admin,
      variables: { id },
    });
    const imp = r.data?.catalogImport as Import;
    if (imp.status !== 'COMMITTING') return imp;
    await new Promise((res) => setTimeout(res, 50));
  }
}

function upload(
  id: string,
  body: string | AsyncIterable<string | Buffer>,
  o: { token?: string; type?: string; query?: string } = {},
) {
  return fetch(`${sys.url}/v1/catalog/imports/${id}/products${o.query ?? ''}`, {
    method: 'POST',
    headers: {
      'content-type': o.type ?? 'application/jsonl',
      ...(o.token === '' ? {} : { authorization: `Bearer ${o.token ?? admin}` }),
    },
    body: typeof body === 'string' ? body : (Readable.toWeb(Readable.from(body)) as ReadableStream),
    duplex: 'half',
  } as RequestInit);
}

const product = (n: number, id = `upl-${n}`) =>
  JSON.stringify({
    id,
    title: `Walnut Monitor Riser ${n}`,
    description: { plain: 'A walnut riser for one monitor.' },
    variants: [
      {
        id: `${id}-v`,
        title: `Walnut Monitor Riser ${n}`,
        price: { amount: 4900 + n, currency: 'USD' },
        availability: { available: true, status: 'in_stock' },
        categories: [{ value: 'Office > Desk Accessories', taxonomy: 'merchant' }],
      },
    ],
  });

const searchTotal = async (query: string) =>
  (
    (await sys.gql(`{ searchProducts(input: { query: ${JSON.stringify(query)} }) { totalCount } }`)).data
      ?.searchProducts as { totalCount: number } | undefined
  )?.totalCount;

describe('POST /v1/catalog/imports/{id}/products', () => {
  it('asks for the role of the GraphQL append: 401 without a token, 403 without catalog:admin', async () => {
    const id = await start();
    const none = await upload(id, product(1), { token: '' });
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer');
    expect(await none.json()).toEqual({ error: expect.stringMatching(/catalog:admin/) });
    const reader = await upload(id, product(1), { token: await sys.token(['catalog:read']) });
    expect(reader.status).toBe(403);
    const forged = await upload(id, product(1), { token: `${admin.slice(0, -4)}AAAA` });
    expect(forged.status).toBe(401);
    const text = await upload(id, product(1), { type: 'text/plain' });
    expect(text.status).toBe(415);
    expect((await upload('imp_nosuchimport', product(1))).status).toBe(404);
    // None of them read a line.
    const after = await upload(id, '');
    expect(after.status).toBe(200);
    expect(await after.json()).toMatchObject({ id, status: 'OPEN', linesRead: 0, accepted: 0 });
  });

  it('judges each line as the append does: refused lines reported, duplicates and a 50 MB line too, the rest committed', async () => {
    const id = await start();
    const mb = Buffer.alloc(1024 * 1024, 0x61);
    async function* body() {
      yield `${product(1)}\n${product(2)}\n{"id": "broken"\n`;
      yield '{"huge":"';
      for (let i = 0; i < 50; i++) yield mb;
      yield `"}\n${product(3, 'upl-1')}\n`;
      // Split inside a line: the server joins what the network cuts.
      const last = product(4);
      yield last.slice(0, 20);
      yield `${last.slice(20)}\n`;
    }
    const res = await upload(id, body());
    expect(res.status).toBe(200);
    const read = (await res.json()) as Import;
    expect(read).toMatchObject({ status: 'OPEN', linesRead: 6, accepted: 3, refused: 3 });
    expect(read.errors).toEqual([
      { line: 3, path: '$', reason: expect.stringMatching(/not JSON/) },
      { line: 4, path: '$', reason: expect.stringMatching(/longer than 128 KiB/) },
      { line: 5, path: '$.id', reason: expect.stringMatching(/upl-1 is on line 1 already/) },
    ]);
    const done = await commit(id);
    expect(done).toMatchObject({ status: 'DONE', created: 3 });
    expect(await searchTotal('walnut monitor riser')).toBe(3);
  });

  it('skips the lines a retried upload sends again, and refuses a gap', async () => {
    const id = await start();
    expect(await (await upload(id, `${product(11)}\n${product(12)}\n`)).json()).toMatchObject({
      linesRead: 2,
    });
    const again = await upload(id, `${product(12)}\n${product(13)}\n`, { query: '?first_line=2' });
    expect(await again.json()).toMatchObject({ linesRead: 3, accepted: 3, refused: 0 });
    const gap = await upload(id, `${product(15)}\n`, { query: '?first_line=5' });
    expect(gap.status).toBe(400);
    expect((await upload(id, '', { query: '?first_line=0' })).status).toBe(400);
    expect((await upload(id, '', { query: '?first_line=1e3' })).status).toBe(400);
    await commit(id);
    const late = await upload(id, `${product(14)}\n`, { query: '?first_line=4' });
    expect(late.status).toBe(409);
  });

  it('fails a body of 10^6 garbage lines at its first chunk, without reading the rest, and keeps nothing', async () => {
    const id = await start();
    let sent = 0;
    async function* garbage() {
      // 10^6 lines, 10,000 a piece: the stream stops being read once the import has failed.
      for (let i = 0; i < 100; i++) {
        sent++;
        yield `${Array.from({ length: 10_000 }, (_, j) => `garbage line ${i * 10_000 + j}`).join('\n')}\n`;
      }
    }
    const res = await upload(id, garbage());
    expect(res.status).toBe(200);
    const failed = (await res.json()) as Import & { note: string };
    expect(failed.status).toBe('FAILED');
    expect(failed.accepted).toBe(0);
    expect(failed.linesRead).toBeLessThan(1_000_000);
    expect(sent).toBeLessThan(100);
    const r = await sys.gql(`mutation($id: ID!) { commitCatalogImport(id: $id) { id } }`, {
      token: admin,
      variables: { id },
    });
    expect(r.errors?.[0]?.extensions?.code).toBe('CONFLICT');
  });
});
