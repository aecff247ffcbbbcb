import type { Migration, Queryable } from '../../../lib/db/index.ts';

/**
 * catalog_option_values: each option value of the catalog (lower case, as
 * `catalog_product_groups.option_values` holds it) with how many products hold it, so that the
 * search reads the catalog's option values (search/option-words.ts) from a table of a few dozen
 * rows instead of scanning every product (~1 s at 1,000,000 products).
 *
 * The database keeps the counts itself: after each statement that inserts, updates or deletes
 * products, a trigger adds what its new rows hold and takes away what its old rows held (the
 * statement's transition tables), and drops a value no product holds any more. The old rows are
 * the versions the statement replaced, so two commits writing one product at once count exactly
 * (the second's old row is the first's product, once the first committed), and so does any
 * writer, in this release or another. The writer counted each batch itself before, from the
 * products it read before writing them (wrong under two commits at once), and every import
 * commit then recounted the whole catalog to settle that: ~0.4 s of PostgreSQL's CPU at
 * 1,000,000 products, for imports of any size (docs/catalog.md, "Import").
 *
 * The counts' rows are updated under the advisory lock 727277 (one writer's counts at a time,
 * until its commit), so two writers never wait on each other's count rows crosswise; a
 * statement that changes no option value takes no lock. The triggers fire with
 * `session_replication_role = replica` too (ENABLE ALWAYS): the writer sets it to skip the
 * foreign keys' checks (products-write.ts, `unchecked`).
 */
const COUNT_FUNCTION = `CREATE FUNCTION catalog_option_values_count() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  vs text[];
  ns int[];
  gone text[];
BEGIN
  -- A value twice in one product counts once.
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg(d.v ORDER BY d.v), array_agg(d.n ORDER BY d.v) INTO vs, ns
      FROM (SELECT v, count(DISTINCT a.product_id)::int AS n
              FROM added a, unnest(a.option_values) AS v GROUP BY v) d;
  ELSIF TG_OP = 'DELETE' THEN
    SELECT array_agg(d.v ORDER BY d.v), array_agg(-d.n ORDER BY d.v) INTO vs, ns
      FROM (SELECT v, count(DISTINCT r.product_id)::int AS n
              FROM removed r, unnest(r.option_values) AS v GROUP BY v) d;
  ELSE
    SELECT array_agg(d.v ORDER BY d.v), array_agg(d.n ORDER BY d.v) INTO vs, ns
      FROM (SELECT x.v, sum(x.s)::int AS n FROM (
              SELECT DISTINCT a.product_id, v, 1 AS s FROM added a, unnest(a.option_values) AS v
              UNION ALL
              SELECT DISTINCT r.product_id, v, -1 FROM removed r, unnest(r.option_values) AS v
            ) x GROUP BY x.v HAVING sum(x.s) <> 0) d;
  END IF;
  IF vs IS NULL THEN
    RETURN NULL;
  END IF;
  PERFORM pg_advisory_xact_lock(727277);
  WITH up AS (
    INSERT INTO catalog_option_values AS c (value, products) SELECT * FROM unnest(vs, ns)
    ON CONFLICT (value) DO UPDATE SET products = c.products + EXCLUDED.products
    RETURNING c.value, c.products)
  SELECT array_agg(up.value) INTO gone FROM up WHERE up.products <= 0;
  IF gone IS NOT NULL THEN
    DELETE FROM catalog_option_values WHERE value = ANY(gone);
  END IF;
  RETURN NULL;
END $$`;

/** Every product's option values counted, into an empty catalog_option_values. */
const COUNT_ALL = `INSERT INTO catalog_option_values (value, products)
  SELECT v, count(DISTINCT g.product_id) FROM catalog_product_groups g, unnest(g.option_values) AS v GROUP BY v`;

const TRIGGERS = [
  ['insert', 'INSERT', 'NEW TABLE AS added'],
  ['update', 'UPDATE', 'OLD TABLE AS removed NEW TABLE AS added'],
  ['delete', 'DELETE', 'OLD TABLE AS removed'],
] as const;

/** Counts kept by the writer until 058; from then on by the database (one statement each). */
export const OPTION_VALUE_MIGRATIONS: readonly Migration[] = [
  {
    id: 'pricing:056-catalog-option-values',
    sql: 'CREATE TABLE catalog_option_values (value text PRIMARY KEY, products int NOT NULL)',
  },
  {
    id: 'pricing:057-catalog-option-values-backfill',
    sql: COUNT_ALL,
  },
  { id: 'pricing:058-catalog-option-values-count-function', sql: COUNT_FUNCTION },
  ...TRIGGERS.flatMap(([name, event, tables]) => [
    {
      id: `pricing:059-catalog-option-values-${name}-trigger`,
      sql: `CREATE TRIGGER catalog_option_values_${name} AFTER ${event} ON catalog_product_groups
            REFERENCING ${tables} FOR EACH STATEMENT EXECUTE FUNCTION catalog_option_values_count()`,
    },
    {
      id: `pricing:060-catalog-option-values-${name}-trigger-always`,
      sql: `ALTER TABLE catalog_product_groups ENABLE ALWAYS TRIGGER catalog_option_values_${name}`,
    },
  ]),
  // Counts a writer of an earlier release left wrong are settled once.
  { id: 'pricing:061-catalog-option-values-settle', sql: 'DELETE FROM catalog_option_values' },
  {
    id: 'pricing:062-catalog-option-values-recount',
    sql: COUNT_ALL,
  },
];

const TRIGGER_NAMES = TRIGGERS.map(([name]) => `catalog_option_values_${name}`);

/**
 * A bulk load into an empty catalog (the seed), with the option values counted once at its end
 * (a scan) instead of by the triggers at each batch: in the load's transaction, the triggers set
 * aside (a failed load rolls that back), then counted afresh under the counts' lock.
 */
export async function countedAtEnd<T>(q: Queryable, load: () => Promise<T>): Promise<T> {
  for (const t of TRIGGER_NAMES) await q.query(`ALTER TABLE catalog_product_groups DISABLE TRIGGER ${t}`);
  const out = await load();
  for (const t of TRIGGER_NAMES)
    await q.query(`ALTER TABLE catalog_product_groups ENABLE ALWAYS TRIGGER ${t}`);
  await q.query('SELECT pg_advisory_xact_lock(727277)');
  await q.query('DELETE FROM catalog_option_values');
  await q.query(COUNT_ALL);
  return out;
}
