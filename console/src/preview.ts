/**
 * The rule editor's preview: GraphQL `previewPromotions` (promotions:admin). The API validates
 * each draft exactly as `upsertPromotion` would and, when every draft is valid, evaluates the
 * basket with the drafts in place. Nothing is saved.
 */
import { graphql } from './api.ts';
import { operation } from './operations.ts';

export interface Violation {
  pointer: string;
  message: string;
}

export interface Preview {
  valid: boolean;
  drafts: {
    index: number;
    promotionId: string | null;
    valid: boolean;
    replacesStored: boolean;
    errors: Violation[];
  }[];
  evaluation: {
    currency: string;
    /** Money is exact decimal text (the Decimal twins of the deprecated Float fields). */
    subtotalDecimal: string;
    discountTotalDecimal: string;
    totalDecimal: string;
    applied: { promotionId: string; name: string; priority: number; amountDecimal: string }[];
    notApplied: { promotionId: string; name: string; reason: string; detail: string | null }[];
  } | null;
}

/** The registered PreviewPromotions (schemas/operations/preview-promotions.graphql). */
const PREVIEW = operation('PreviewPromotions');

export async function previewPromotions(basket: unknown, draft: unknown): Promise<Preview> {
  const data = await graphql<{ previewPromotions: Preview }>(PREVIEW, { basket, draftRules: [draft] });
  return data.previewPromotions;
}
