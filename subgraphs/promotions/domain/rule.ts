import { formatPointer } from '../../../lib/json/json-path.ts';
import { unstorableString } from '../../../lib/json/well-formed.ts';
import { ACTIONS, type CompiledAction } from './actions/index.ts';
import { normaliseCoupon } from './basket.ts';
import { Check } from './check.ts';
import { type CompiledCondition, compileCondition } from './conditions.ts';
import { RuleInvalid } from './errors.ts';
import { type Clause, cheapest } from './needs.ts';

/** The rule-format version this engine reads (the spec: "the promotion rule format declares version 2.1"). */
export const RULE_FORMAT_VERSION = '2.1';

export const STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type RuleStatus = (typeof STATUSES)[number];

/**
 * How a rule combines with the others, in priority order: STACKABLE applies and lets later
 * rules apply; STOP_AFTER applies and stops the rules after it; EXCLUSIVE applies only when no
 * rule applied before it, and stops the rules after it.
 */
export const STACKING = ['STACKABLE', 'STOP_AFTER', 'EXCLUSIVE'] as const;
export type Stacking = (typeof STACKING)[number];

/** A rule document of format 2.1 (the spec's fields plus the optional ones after `max_redemptions_per_user`). */
export interface RuleDocument {
  version: string;
  promotion_id: string;
  name: string;
  priority: number;
  status: RuleStatus;
  conditions: unknown;
  actions: Record<string, unknown>[];
  max_redemptions_per_user?: number | null;
  description?: string;
  valid_from?: string;
  valid_until?: string;
  coupon_codes?: string[];
  stacking?: Stacking;
}

export interface CompiledRule {
  readonly promotionId: string;
  readonly name: string;
  readonly priority: number;
  readonly status: RuleStatus;
  readonly stacking: Stacking;
  /** Per customer; undefined means unlimited. */
  readonly maxRedemptionsPerUser: number | undefined;
  /** Milliseconds since the epoch; the rule applies from validFrom inclusive to validUntil exclusive. */
  readonly validFrom: number | undefined;
  readonly validUntil: number | undefined;
  /** Normalised codes; empty means no coupon is needed. */
  readonly couponCodes: readonly string[];
  readonly condition: CompiledCondition;
  /**
   * Basket keys of which at least one must be present for the rule to apply: the most selective
   * clause its coupon codes and conditions make necessary (needs.ts). The rule index visits the
   * rule only for baskets holding one of them; undefined: no key is necessary, always visited.
   */
  readonly needs: Clause | undefined;
  readonly actions: readonly CompiledAction[];
  /** The document as loaded, for reads and the admin API. */
  readonly document: RuleDocument;
}

const KNOWN_FIELDS = [
  'version',
  'promotion_id',
  'name',
  'priority',
  'status',
  'conditions',
  'actions',
  'max_redemptions_per_user',
  'description',
  'valid_from',
  'valid_until',
  'coupon_codes',
  'stacking',
];

export const PROMOTION_ID = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
const COUPON = /^[A-Za-z0-9][A-Za-z0-9._:-]*$/;
// RFC 3339 date-time with an explicit offset; Date.parse alone accepts too much.
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * Validates a rule document and compiles it to closures, in one pass. Throws RuleInvalid with
 * every violation found, each at a JSON pointer into the document.
 */
export function compileRule(input: unknown): CompiledRule {
  const check = new Check();
  const doc = check.object(input, '');
  if (!doc) throw new RuleInvalid(check.errors);
  check.onlyKeys(doc, '', KNOWN_FIELDS);
  // A rule is stored as jsonb: text PostgreSQL refuses (U+0000, a lone surrogate) is a violation
  // here, not the database's error at the write.
  const unstorable = unstorableString(doc);
  if (unstorable) check.fail(formatPointer(unstorable.segments), unstorable.reason);
  if (doc.version !== RULE_FORMAT_VERSION)
    check.fail(
      '/version',
      `unsupported rule format version ${JSON.stringify(doc.version)}; this engine reads ${RULE_FORMAT_VERSION}`,
    );
  const promotionId = check.string(doc.promotion_id, '/promotion_id', { max: 64, pattern: PROMOTION_ID });
  const name = check.string(doc.name, '/name', { max: 200 });
  const priority = check.integer(doc.priority, '/priority', -1_000_000, 1_000_000);
  const status = check.oneOf(doc.status, '/status', STATUSES);
  const stacking =
    doc.stacking === undefined ? 'STACKABLE' : check.oneOf(doc.stacking, '/stacking', STACKING);
  if (doc.description !== undefined) check.string(doc.description, '/description', { min: 0, max: 1000 });
  const cap =
    doc.max_redemptions_per_user === undefined || doc.max_redemptions_per_user === null
      ? null
      : check.integer(doc.max_redemptions_per_user, '/max_redemptions_per_user', 1, 1_000_000);
  const validFrom = instant(doc.valid_from, '/valid_from', check);
  const validUntil = instant(doc.valid_until, '/valid_until', check);
  if (validFrom !== undefined && validUntil !== undefined && validUntil <= validFrom)
    check.fail('/valid_until', 'must be later than valid_from');
  const couponCodes = coupons(doc.coupon_codes, check);
  const condition =
    doc.conditions === undefined
      ? check.fail('/conditions', 'is required')
      : compileCondition(doc.conditions, '/conditions', check);
  const actions = compileActions(doc.actions, check);

  if (
    check.errors.length > 0 ||
    promotionId === undefined ||
    name === undefined ||
    priority === undefined ||
    status === undefined ||
    stacking === undefined ||
    cap === undefined ||
    !condition ||
    !actions
  )
    throw new RuleInvalid(check.errors.length > 0 ? check.errors : [{ pointer: '', message: 'is invalid' }]);

  return {
    promotionId,
    name,
    priority,
    status,
    stacking,
    maxRedemptionsPerUser: cap ?? undefined,
    validFrom,
    validUntil,
    couponCodes,
    condition,
    needs: cheapest([
      ...(couponCodes.length > 0 ? [couponCodes.map((value) => ({ dim: 'coupon' as const, value }))] : []),
      ...condition.needs.holds,
    ]),
    actions,
    document: doc as unknown as RuleDocument,
  };
}

function instant(v: unknown, at: string, check: Check): number | undefined {
  if (v === undefined) return undefined;
  const s = check.string(v, at, { max: 40 });
  if (s === undefined) return undefined;
  const ms = DATE_TIME.test(s) ? Date.parse(s) : Number.NaN;
  if (Number.isNaN(ms))
    return check.fail(at, 'must be an RFC 3339 date-time with an offset, e.g. 2026-12-31T23:59:59Z');
  return ms;
}

function coupons(v: unknown, check: Check): string[] {
  if (v === undefined) return [];
  const list = check.array(v, '/coupon_codes', 1, 100) ?? [];
  const codes = list.map((c, i) => check.string(c, `/coupon_codes/${i}`, { max: 64, pattern: COUPON }));
  return [...new Set(codes.filter((c): c is string => c !== undefined).map(normaliseCoupon))];
}

function compileActions(v: unknown, check: Check): CompiledAction[] | undefined {
  const list = check.array(v, '/actions', 1, 10);
  if (!list) return undefined;
  const out: CompiledAction[] = [];
  list.forEach((a, i) => {
    const at = `/actions/${i}`;
    const o = check.object(a, at);
    if (!o) return;
    const type = check.string(o.type, `${at}/type`, { max: 64 });
    if (type === undefined) return;
    const kind = ACTIONS[type];
    if (!kind) {
      check.fail(`${at}/type`, `unknown action type ${type}; known: ${Object.keys(ACTIONS).join(', ')}`);
      return;
    }
    const compiled = kind.compile(o, at, check);
    if (compiled) out.push(compiled);
  });
  return out.length === list.length ? out : undefined;
}
