/**
 * The rule editor's preview: GraphQL `previewPromotions` (promotions:admin). The API validates
 * each draft exactly as `upsertPromotion` would and, when every draft is valid, evaluates the
 * basket with the drafts in place. Nothing is saved.
 */
import { graphql } from './api.ts';

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
    subtotal: string | number;
    discountTotal: string | number;
    total: string | number;
    applied: { promotionId: string; name: string; priority: number; amount: string | number }[];
    notApplied: { promotionId: string; name: string; reason: string; detail: string | null }[];
  } | null;
}

const PREVIEW = `query ConsolePreviewPromotions($basket: PricedBasketInput!, $draftRules: [JSON!]!) {
  previewPromotions(basket: $basket, draftRules: $draftRules) {
    valid
    drafts { index promotionId valid replacesStored errors { pointer message } }
    evaluation {
      currency subtotal discountTotal total
      applied { promotionId name priority amount }
      notApplied { promotionId name reason detail }
    }
  }
}`;

export async function previewPromotions(basket: unknown, draft: unknown): Promise<Preview> {
  const data = await graphql<{ previewPromotions: Preview }>(PREVIEW, { basket, draftRules: [draft] });
  return data.previewPromotions;
}
