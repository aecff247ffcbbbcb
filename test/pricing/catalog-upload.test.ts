/**
 * The catalog import's bulk upload (POST /v1/catalog/imports/{id}/products, the command's path)
 * on the running system: the GraphQL append's role, the same per-line judgement and report, a
 * retry skipping what was read, and the hostile files (a 50 MB line, 10^6 lines of garbage,
 * duplicate ids) refused line by line or as a whole without being held, nothing half-imported;
 * a client that goes away mid-body (issue 47) is its own doing, not a failure of the server.
 */
import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

  it('takes a client that drops mid-body as its own doing: no 5xx, no error log, whole chunks kept, and a resume completes', async () => {
    const id = await start();
    const route = '/v1/catalog/imports/:importId/products';
    const errors = vi.spyOn(sys.platform.log, 'error');
    const infos = vi.spyOn(sys.platform.log, 'info');
    // 2,000 lines are one chunk (STREAM_CHUNK_LINES): one whole chunk and 300 lines and a half
    // of the next are sent before the socket goes.
    const lines = Array.from({ length: 2400 }, (_, i) => product(1000 + i, `drop-${i}`));
    const sent = `${lines.slice(0, 2300).join('\n')}\n${lines[2300]?.slice(0, 40)}`;
    const { hostname, port } = new URL(sys.url);
    const socket = connect(Number(port), hostname);
    await new Promise((res) => socket.once('connect', res));
    socket.write(
      `POST /v1/catalog/imports/${id}/products HTTP/1.1\r\nHost: ${hostname}\r\n` +
        `Authorization: Bearer ${admin}\r\nContent-Type: application/jsonl\r\n` +
        `Content-Length: ${Buffer.byteLength(sent) + 1_000_000}\r\n\r\n${sent}`,
    );
    // The first chunk is staged (the import says so), then the client goes without a word.
    await expect.poll(async () => (await importOf(id)).linesRead, { timeout: 30_000 }).toBe(2000);
    socket.destroy();
    // The server has answered (to nobody) once it has said so.
    await expect
      .poll(() => infos.mock.calls.some((c) => /client went away/.test(String(c[1]))), { timeout: 10_000 })
      .toBe(true);
    expect(await uploadStatuses(route)).not.toContainEqual(expect.stringMatching(/^5/));
    expect(errors).not.toHaveBeenCalled();
    errors.mockRestore();
    infos.mockRestore();
    // Nothing of the half-sent chunk is staged; the import is still open for the rest.
    expect(await importOf(id)).toMatchObject({ status: 'OPEN', linesRead: 2000, accepted: 2000 });
    const rest = await upload(id, `${lines.slice(2000).join('\n')}\n`, { query: '?first_line=2001' });
    expect(rest.status).toBe(200);
    expect(await rest.json()).toMatchObject({ status: 'OPEN', linesRead: 2400, accepted: 2400 });
    expect(await commit(id)).toMatchObject({ status: 'DONE', created: 2400 });
    // The histogram does see this route (the resume's 200), and never saw a 5xx of it.
    const statuses = await uploadStatuses(route);
    expect(statuses).toContain('200');
    expect(statuses).not.toContainEqual(expect.stringMatching(/^5/));
  }, 120_000);
});

async function importOf(id: string): Promise<Import> {
  const r = await sys.gql(`query($id: ID!) { catalogImport(id: $id) { ${FIELDS} } }`, {
    token: admin,
    variables: { id },
  });
  return r.data?.catalogImport as Import;
}

/** The statuses the request histogram has counted for `route`. */
async function uploadStatuses(route: string): Promise<string[]> {
  const m = await sys.platform.metrics.getSingleMetric('http_request_duration_seconds')?.get();
  const values = (m?.values ?? []) as {
    metricName?: string;
    labels: Record<string, unknown>;
    value: number;
  }[];
  return values
    .filter((v) => v.labels.route === route && String(v.metricName).endsWith('_count') && v.value > 0)
    .map((v) => String(v.labels.status));
}
