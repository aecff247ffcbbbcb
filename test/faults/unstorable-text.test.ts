/**
 * Caller text PostgreSQL cannot store (a lone surrogate, U+0000), sent to the GraphQL mutations
 * that store a caller's JSON as jsonb (issue 47): refused as BAD_USER_INPUT naming where, never
 * the database's error surfacing as an internal one; a surrogate pair (an emoji) accepted and
 * kept. Embedded system (the import's stores are covered on PGlite and PostgreSQL by
 * test/pricing/catalog-import-surrogates.test.ts).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type TestSystem } from '../../harness/system.ts';
import { rule } from '../promotions/support.ts';

let sys: TestSystem;
let catalogAdmin: string;
let promotionsAdmin: string;
beforeAll(async () => {
  sys = await startEmbedded({});
  catalogAdmin = await sys.token(['catalog:admin']);
  promotionsAdmin = await sys.token(['promotions:admin']);
});
afterAll(() => sys?.close());

/** Independent of the code under test: Unicode text iff UTF-8 carries it unchanged. */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

type Outcome = { code: string | undefined; message: string; errors: unknown; data: unknown };

async function startImport(feedId: string): Promise<Outcome> {
  const r = await sys.gql(
    'mutation($input: StartCatalogImportInput!) { startCatalogImport(input: $input) { id feedId } }',
    { token: catalogAdmin, variables: { input: { mode: 'PARTIAL', metadata: { id: feedId } } } },
  );
  const e = r.errors?.[0];
  return {
    code: e?.extensions?.code as string | undefined,
    message: e?.message ?? '',
    errors: (e?.extensions as { errors?: unknown } | undefined)?.errors,
    data: r.data?.startCatalogImport,
  };
}

let promotions = 0;
async function upsert(name: string, segment = 'SURR'): Promise<Outcome> {
  const doc = rule({
    promotion_id: `SURR-${++promotions}`,
    conditions: { all: [{ fact: 'customer.segment', operator: 'equal', value: segment }] },
    actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 5 }],
  });
  const r = await sys.gql('mutation($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId name } }', {
    token: promotionsAdmin,
    variables: { rule: { ...doc, name } },
  });
  const e = r.errors?.[0];
  return {
    code: e?.extensions?.code as string | undefined,
    message: e?.message ?? '',
    errors: (e?.extensions as { errors?: unknown } | undefined)?.errors,
    data: r.data?.upsertPromotion,
  };
}

const refused: [string, string, RegExp][] = [
  ['a lone high surrogate', 'x\ud800', /lone surrogate/],
  ['a lone low surrogate', '\udc00x', /lone surrogate/],
  ['a pair written low first', '\ude00\ud83d', /lone surrogate/],
  ['U+0000', 'a\u0000b', /U\+0000/],
];

describe('startCatalogImport: the feed metadata', () => {
  it.each(refused)('refuses an id holding %s as BAD_USER_INPUT at $.id', async (_what, id, reason) => {
    const r = await startImport(`feed_${id}`);
    expect(r.code).toBe('BAD_USER_INPUT');
    expect(r.message).toMatch(reason);
    expect(r.message).toContain('$.id');
    expect(r.data).toBeUndefined();
  });

  it('keeps an id holding a surrogate pair as written', async () => {
    const r = await startImport('feed_\u{1F600}');
    expect(r.code).toBeUndefined();
    expect(r.data).toMatchObject({ feedId: 'feed_\u{1F600}' });
  });
});

describe('upsertPromotion: the rule document', () => {
  it.each(refused)('refuses a name holding %s as BAD_USER_INPUT at /name', async (_what, name, reason) => {
    const r = await upsert(name);
    expect(r.code).toBe('BAD_USER_INPUT');
    expect(r.errors).toEqual([{ pointer: '/name', message: expect.stringMatching(reason) }]);
  });

  it('refuses one deep in a condition, at its pointer', async () => {
    const r = await upsert('Fine', 'S\udbff');
    expect(r.code).toBe('BAD_USER_INPUT');
    expect(r.errors).toEqual([
      { pointer: '/conditions/all/0/value', message: expect.stringMatching(/lone surrogate/) },
    ]);
  });

  it('writes a lone surrogate of a member name as \\udXXX text in the error pointer: the error is Unicode text', async () => {
    const doc = rule({
      promotion_id: `SURR-${++promotions}`,
      conditions: { all: [{ fact: 'customer.segment', operator: 'equal', value: 'S' }] },
      actions: [{ type: 'PERCENTAGE_DISCOUNT_CART', value: 5 }],
    });
    const r = await sys.gql('mutation($rule: JSON!) { upsertPromotion(rule: $rule) { promotionId } }', {
      token: promotionsAdmin,
      variables: { rule: { ...doc, 'x\ud800': 1 } },
    });
    const e = r.errors?.[0];
    expect(e?.extensions?.code).toBe('BAD_USER_INPUT');
    const errors = (e?.extensions as { errors?: { pointer: string; message: string }[] } | undefined)?.errors;
    expect(errors).toEqual(
      expect.arrayContaining([
        { pointer: '/x\\ud800', message: expect.stringMatching(/lone surrogate/) },
        { pointer: '/x\\ud800', message: 'is not a known field' },
      ]),
    );
    expect(wellFormed(e?.message ?? '')).toBe(true);
    expect(e?.message).toContain('/x\\ud800 ');
  });

  it('keeps a name holding a surrogate pair as written', async () => {
    const r = await upsert('Smile \u{1F600}');
    expect(r.code).toBeUndefined();
    expect(r.data).toMatchObject({ name: 'Smile \u{1F600}' });
  });

  it('answers any name with the rule or BAD_USER_INPUT, never an internal error: accepted iff Unicode text', async () => {
    const unit = fc.oneof(
      fc.constantFrom('\ud800', '\udbff', '\udc00', '\udfff', '\ud83d', '\ude00', '\u{1F600}', 'a', '\u0000'),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc
          .array(unit, { minLength: 1, maxLength: 6 })
          .map((p) => p.join(''))
          .filter((s) => s.length > 0),
        async (name) => {
          const r = await upsert(name);
          if (wellFormed(name) && !name.includes('\0')) {
            expect(r.code).toBeUndefined();
            expect(r.data).toMatchObject({ name });
          } else {
            expect(r.code).toBe('BAD_USER_INPUT');
            expect(r.errors).toEqual([{ pointer: '/name', message: expect.any(String) }]);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
