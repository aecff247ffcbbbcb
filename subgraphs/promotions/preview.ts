import { RuleInvalid, type Violation } from './domain/errors.ts';
import { type CompiledRule, compileRule } from './domain/rule.ts';
import { buildRuleset, type Ruleset } from './domain/ruleset.ts';
import type { PromotionEvaluation } from './domain/shapes.ts';

/** Drafts one preview may carry: the editor sends one or a few; a bound keeps a call cheap. */
export const MAX_DRAFTS = 20;

/** One draft rule as `upsertPromotion` would judge it. */
export interface DraftRuleCheck {
  readonly index: number;
  readonly promotionId: string | null;
  readonly valid: boolean;
  readonly replacesStored: boolean;
  readonly errors: readonly Violation[];
}

export interface PromotionPreview {
  readonly valid: boolean;
  readonly drafts: readonly DraftRuleCheck[];
  /** Null when a draft is invalid: an evaluation without it would answer another question. */
  readonly evaluation: PromotionEvaluation | null;
}

/** Too many drafts: refused before any is compiled. */
export class PreviewInvalid extends RuleInvalid {
  override name = 'PreviewInvalid';
}

const idOf = (draft: unknown): string | null => {
  const id = (draft as { promotion_id?: unknown } | null)?.promotion_id;
  return typeof id === 'string' && id.length <= 64 ? id : null;
};

/**
 * Compiles each draft with the same compileRule that `upsert` runs before it stores a rule, so
 * the editor shows exactly the violations a save would get. Two drafts with one promotion_id
 * would make the preview ambiguous: the later one is refused at /promotion_id.
 */
export function checkDrafts(
  drafts: readonly unknown[],
  isStored: (promotionId: string) => boolean,
): { valid: boolean; drafts: DraftRuleCheck[]; compiled: CompiledRule[] } {
  if (drafts.length > MAX_DRAFTS)
    throw new PreviewInvalid([{ pointer: '/draftRules', message: `at most ${MAX_DRAFTS} drafts` }]);
  const seen = new Set<string>();
  const compiled: CompiledRule[] = [];
  const checks = drafts.map((draft, index): DraftRuleCheck => {
    const promotionId = idOf(draft);
    let errors: readonly Violation[] = [];
    try {
      const rule = compileRule(draft);
      if (seen.has(rule.promotionId))
        errors = [
          { pointer: '/promotion_id', message: 'another draft of this preview has this promotion_id' },
        ];
      else {
        seen.add(rule.promotionId);
        compiled.push(rule);
      }
    } catch (err) {
      if (!(err instanceof RuleInvalid)) throw err;
      errors = err.errors;
    }
    return {
      index,
      promotionId,
      valid: errors.length === 0,
      replacesStored: promotionId !== null && isStored(promotionId),
      errors,
    };
  });
  return { valid: checks.every((c) => c.valid), drafts: checks, compiled };
}

/** The stored rules with the drafts in place of those of the same id (a new ruleset; the live one is untouched). */
export function withDrafts(
  stored: ReadonlyMap<string, { readonly compiled: CompiledRule }>,
  drafts: readonly CompiledRule[],
): Ruleset {
  const byId = new Map<string, CompiledRule>();
  for (const [id, p] of stored) byId.set(id, p.compiled);
  for (const d of drafts) byId.set(d.promotionId, d);
  return buildRuleset(byId.values());
}
