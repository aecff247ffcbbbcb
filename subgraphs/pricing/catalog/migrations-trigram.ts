import type { Db, Migration } from '../../../lib/db/index.ts';

/**
 * The catalog's migrations that name pg_trgm's objects, qualified by the schema it lives in
 * (the rest are migrations.ts). GIN indexes are made with `fastupdate = off`: their pending list is merged into the index by
 * VACUUM, and the embedded store (single-user PGlite) has no autovacuum, so a pending list would
 * grow with every write and every search would read it whole.
 */
export const trigram = (ext: string): readonly Migration[] => [
  {
    id: 'pricing:033-search-words-trigram',
    sql: `CREATE INDEX catalog_search_words_trgm ON catalog_search_words USING gin (word ${ext}.gin_trgm_ops) WITH (fastupdate = off)`,
  },
  {
    id: 'pricing:034-product-titles-trigram',
    sql: `CREATE INDEX catalog_product_groups_title_trgm ON catalog_product_groups USING gin (lower(title) ${ext}.gin_trgm_ops) WITH (fastupdate = off)`,
  },
  {
    // For each of a query's words: whether the catalog has it, and else the catalog words most
    // alike by trigrams (search/sql.ts, `corrected`). pg_trgm's `%` reads its threshold from a
    // setting; set on the function, it holds for this call alone, in one statement (it was a
    // transaction of four round trips: BEGIN, set_config, the query, COMMIT). The trigram index,
    // always: the planner reads a few hundred words as cheaper to scan, but a scan computes the
    // similarity of every word: 4.7 ms on the embedded store, against 1.1 ms through the index.
    id: 'pricing:042-search-near-words',
    sql: `CREATE FUNCTION catalog_search_near_words(words text[])
          RETURNS TABLE (word text, known boolean, near text[]) LANGUAGE sql STABLE
          SET pg_trgm.similarity_threshold = '0.2' SET enable_seqscan = off
          AS $$
            SELECT t.word, EXISTS (SELECT 1 FROM catalog_search_words w WHERE w.word = t.word),
                   ARRAY(SELECT w.word FROM catalog_search_words w WHERE w.word OPERATOR(${ext}.%) t.word
                          ORDER BY ${ext}.similarity(w.word, t.word) DESC, w.word LIMIT 10)
              FROM unnest(words) AS t(word)
          $$`,
  },
];

/**
 * Where pg_trgm is: the schema it was installed in, or `catalog_ext`, where it is installed when
 * it is not yet. Its objects are always named with that schema, because a connection's search
 * path need not include it (a schema-scoped DATABASE_URL, the tests' schemas). pg_trgm is a
 * trusted extension (PostgreSQL 13+): the database's owner may create it. PGlite loads its
 * bundle at open (lib/db/pglite.ts).
 */
export async function trigramSchema(db: Db): Promise<string> {
  return db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(727276)');
    const found = await tx.query<{ schema: string }>(
      `SELECT n.nspname AS schema FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm'`,
    );
    if (found[0]) return found[0].schema;
    await tx.query('CREATE SCHEMA IF NOT EXISTS catalog_ext');
    await tx.query('CREATE EXTENSION pg_trgm WITH SCHEMA catalog_ext');
    return 'catalog_ext';
  });
}
