/**
 * The promotions preview of the operator API (docs/operator-api.md): a basket evaluated with a
 * draft rule in place, validated exactly as a save would be, nothing stored.
 */
import { rest } from './api.ts';

export interface Preview {
  currency: string;
  subtotal: string | number;
  discountTotal: string | number;
  total: string | number;
  applied: { promotionId: string; name: string; amount: string | number }[];
  notApplied: { promotionId: string; reason: string; detail?: string }[];
}

export async function previewPromotions(basket: unknown, draft: unknown): Promise<Preview> {
  const { data } = await rest<Preview>('/api/v2/operator/promotions/preview', {
    body: { basket, draft_rules: [draft] },
  });
  return data;
}
