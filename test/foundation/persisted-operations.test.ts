/**
 * Persisted operations on the running gateway: automatic persisted queries (Apollo's protocol)
 * and the safelist mode, where only the manifest's operations (schemas/operations/) run.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MANIFEST_URL, type OperationManifest } from '../../gateway/graphql/manifest.ts';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { generateCatalog } from '../../subgraphs/pricing/catalog/generate.ts';
import { type Answer, apq, codeOf, get, post, sha256 } from './demand-support.ts';

const SKU = generateCatalog(500)[0]?.sku ?? 'SKU-AAA-000001';
const manifest = JSON.parse(readFileSync(DEFAULT_MANIFEST_URL, 'utf8')) as OperationManifest;
const listed = (name: string) => {
  const op = manifest.operations.find((o) => o.name === name);
  if (!op) throw new Error(`${name} is not in the manifest`);
  return op;
};
const PRODUCTS = listed('Products');
const productsOf = (res: Answer) => (res.data?.products as { sku: string }[] | undefined)?.map((p) => p.sku);

/** The answer, and whether it reached any subgraph (the gateway's own counter). */
const reaching = async (sys: TestSystem, call: () => Promise<Answer>) => {
  const before = await sys.subgraphRequests();
  const res = await call();
  return { ...res, reached: (await sys.subgraphRequests()) > before };
};

describe('automatic persisted queries (safelist off)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded();
  });
  afterAll(() => sys?.close());

  it('round trip: unknown hash → PERSISTED_QUERY_NOT_FOUND → registration → the hash alone runs', async () => {
    // a comment keeps the document (and its hash) new to this run
    const query = `# apq ${Date.now()}\n{ products(skus: ["${SKU}"]) { sku } }`;
    const hash = sha256(query);

    const miss = await reaching(sys, () => post(sys.url, { extensions: apq(hash) }));
    expect(codeOf(miss)).toBe('PERSISTED_QUERY_NOT_FOUND'); // the protocol's invitation (HTTP 200)
    expect(miss.reached).toBe(false);

    const registered = await post(sys.url, { query, extensions: apq(hash) });
    expect(registered.status).toBe(200);
    expect(productsOf(registered)).toEqual([SKU]);

    const hit = await reaching(sys, () => post(sys.url, { extensions: apq(hash) }));
    expect(hit.status).toBe(200);
    expect(hit.errors).toBeUndefined();
    expect(productsOf(hit)).toEqual([SKU]);
    expect(hit.reached).toBe(true);
  });

  it('runs a manifest operation by its id alone, with no registration', async () => {
    const res = await post(sys.url, { extensions: apq(PRODUCTS.id), variables: { skus: [SKU] } });
    expect(res.status).toBe(200);
    expect(productsOf(res)).toEqual([SKU]);
  });

  it('refuses a hash that is not the document’s with 400, and keeps nothing', async () => {
    const query = `{ products(skus: ["MISMATCH-${Date.now()}"]) { sku } }`;
    const wrong = sha256(`${query} `);
    const res = await reaching(sys, () => post(sys.url, { query, extensions: apq(wrong) }));
    expect(res.status).toBe(400);
    expect(res.reached).toBe(false);
    expect(codeOf(await post(sys.url, { extensions: apq(wrong) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('never registers a document a limit refuses', async () => {
    const query = `{ products(skus: []) { ${Array.from({ length: 16 }, (_, i) => `a${i}: sku`).join(' ')} } }`;
    const hash = sha256(query);
    const res = await reaching(sys, () => post(sys.url, { query, extensions: apq(hash) }));
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('MAX_ALIASES_LIMIT');
    expect(res.reached).toBe(false);
    expect(codeOf(await post(sys.url, { extensions: apq(hash) }))).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  it('still runs a document sent as text that is not in the manifest', async () => {
    const res = await post(sys.url, { query: `{ products(skus: ["${SKU}"]) { sku name } }` });
    expect(res.status).toBe(200);
    expect(productsOf(res)).toEqual([SKU]);
  });
});

describe('safelist mode (GRAPHQL_SAFELIST=on)', () => {
  let sys: TestSystem;
  beforeAll(async () => {
    sys = await startEmbedded({ GRAPHQL_SAFELIST: 'on' });
  });
  afterAll(() => sys?.close());

  it('runs a registered operation sent by id', async () => {
    const res = await reaching(sys, () =>
      post(sys.url, { extensions: apq(PRODUCTS.id), variables: { skus: [SKU] } }),
    );
    expect(res.status).toBe(200);
    expect(productsOf(res)).toEqual([SKU]);
    expect(res.reached).toBe(true);
  });

  it('runs a registered operation sent as its exact manifest body, and by GET', async () => {
    const byBody = await post(sys.url, { query: PRODUCTS.body, variables: { skus: [SKU] } });
    expect(byBody.status).toBe(200);
    expect(productsOf(byBody)).toEqual([SKU]);
    const byGet = await get(sys.url, {
      extensions: JSON.stringify(apq(PRODUCTS.id)),
      variables: JSON.stringify({ skus: [SKU] }),
    });
    expect(byGet.status).toBe(200);
    expect(productsOf(byGet)).toEqual([SKU]);
  });

  it('lets a registered mutation through to the role rules (403 without the role, not a safelist refusal)', async () => {
    const token = await sys.token(['orders:read']);
    const res = await fetch(`${sys.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        extensions: apq(listed('SetBasePrice').id),
        variables: { input: { sku: SKU, currency: 'USD', amount: 10 } },
      }),
    });
    expect(res.status).toBe(403);
    expect(((await res.json()) as Answer).errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
  });

  const REFUSED: { label: string; code: string; send: () => Promise<Answer> }[] = [
    {
      label: 'an unregistered document',
      code: 'QUERY_NOT_IN_SAFELIST',
      send: () => post(sys.url, { query: `{ products(skus: ["${SKU}"]) { sku } }` }),
    },
    {
      label: 'a registered operation reformatted (the body is matched exactly)',
      code: 'QUERY_NOT_IN_SAFELIST',
      send: () => post(sys.url, { query: PRODUCTS.body.replace(/\n\s*/g, ' '), variables: { skus: [SKU] } }),
    },
    {
      label: 'an unknown operation id',
      code: 'PERSISTED_QUERY_NOT_IN_LIST',
      send: () => post(sys.url, { extensions: apq(sha256('{ __typename }')) }),
    },
    {
      label: 'an APQ registration',
      code: 'QUERY_NOT_IN_SAFELIST',
      send: () => {
        const query = `{ products(skus: ["${SKU}"]) { name } }`;
        return post(sys.url, { query, extensions: apq(sha256(query)) });
      },
    },
    {
      label: 'an unregistered document by GET',
      code: 'QUERY_NOT_IN_SAFELIST',
      send: () => get(sys.url, { query: `{ products(skus: ["${SKU}"]) { sku } }` }),
    },
    {
      label: 'a batch with one unregistered document',
      code: 'QUERY_NOT_IN_SAFELIST',
      send: () =>
        post(sys.url, [
          { extensions: apq(PRODUCTS.id), variables: { skus: [SKU] } },
          { query: '{ __typename }' },
        ]),
    },
    {
      label: 'a registered id whose document is swapped for another',
      code: 'QUERY_NOT_IN_SAFELIST',
      send: () => post(sys.url, { query: '{ __typename }', extensions: apq(PRODUCTS.id) }),
    },
  ];

  it.each(REFUSED)('refuses $label with 400 $code, before any subgraph', async ({ code, send }) => {
    const res = await reaching(sys, send);
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe(code);
    expect(res.data ?? null).toBeNull();
    expect(res.reached).toBe(false);
  });

  it('keeps an APQ registration refused: the hash alone stays unknown afterwards', async () => {
    const query = `{ products(skus: ["REG-${Date.now()}"]) { sku } }`;
    await post(sys.url, { query, extensions: apq(sha256(query)) });
    const res = await post(sys.url, { extensions: apq(sha256(query)) });
    expect(res.status).toBe(400);
    expect(codeOf(res)).toBe('PERSISTED_QUERY_NOT_IN_LIST');
  });
});
