import type { Db } from '../../../lib/db/index.ts';
import type { RuleDocument, RuleStatus } from '../domain/rule.ts';

/** A stored rule: the document as written plus bookkeeping. */
export interface StoredRule {
  promotionId: string;
  document: RuleDocument;
  revision: number;
  updatedAt: string;
}

interface Row {
  promotion_id: string;
  document: RuleDocument | string;
  revision: number;
  updated_at: Date | string;
}

const toStored = (r: Row): StoredRule => ({
  promotionId: r.promotion_id,
  // PGlite and pg both parse jsonb; tolerate a string from other drivers.
  document: typeof r.document === 'string' ? (JSON.parse(r.document) as RuleDocument) : r.document,
  revision: Number(r.revision),
  updatedAt: new Date(r.updated_at).toISOString(),
});

/**
 * Rule documents in the shared SQL store. Documents are validated (compiled) before they get
 * here; the store keeps them verbatim, so a read returns what was written.
 */
export class RuleStore {
  constructor(private readonly db: Db) {}

  async all(): Promise<StoredRule[]> {
    const rows = await this.db.query<Row>(
      'SELECT promotion_id, document, revision, updated_at FROM promotion_rules ORDER BY promotion_id',
    );
    return rows.map(toStored);
  }

  async get(promotionId: string): Promise<StoredRule | undefined> {
    const rows = await this.db.query<Row>(
      'SELECT promotion_id, document, revision, updated_at FROM promotion_rules WHERE promotion_id = $1',
      [promotionId],
    );
    return rows[0] ? toStored(rows[0]) : undefined;
  }

  async upsert(doc: RuleDocument): Promise<StoredRule> {
    const rows = await this.db.query<Row>(
      `INSERT INTO promotion_rules (promotion_id, document, status) VALUES ($1, $2::jsonb, $3)
       ON CONFLICT (promotion_id) DO UPDATE SET document = EXCLUDED.document, status = EXCLUDED.status,
         revision = promotion_rules.revision + 1, updated_at = now()
       RETURNING promotion_id, document, revision, updated_at`,
      [doc.promotion_id, JSON.stringify(doc), doc.status],
    );
    return toStored(rows[0] as Row);
  }

  /** Changes the status inside the document too: the document stays the one source. */
  async setStatus(promotionId: string, status: RuleStatus): Promise<StoredRule | undefined> {
    const rows = await this.db.query<Row>(
      `UPDATE promotion_rules SET status = $2, document = jsonb_set(document, '{status}', to_jsonb($2::text)),
         revision = revision + 1, updated_at = now()
       WHERE promotion_id = $1
       RETURNING promotion_id, document, revision, updated_at`,
      [promotionId, status],
    );
    return rows[0] ? toStored(rows[0]) : undefined;
  }
}
