/**
 * Errors are values with a type; the REST adapter maps them to problem+json and the GraphQL
 * adapter to BAD_USER_INPUT, in one place each (rest.ts, graphql.ts).
 */

/** One violation, located by a JSON pointer into the offending document. */
export interface Violation {
  pointer: string;
  message: string;
}

abstract class InvalidInput extends Error {
  constructor(
    message: string,
    readonly errors: readonly Violation[],
  ) {
    super(`${message}: ${errors.map((e) => `${e.pointer || '/'} ${e.message}`).join('; ')}`);
  }
}

/** A rule document that does not compile (unknown version, fact, operator, action, wrong type…). */
export class RuleInvalid extends InvalidInput {
  override name = 'RuleInvalid';
  constructor(errors: readonly Violation[]) {
    super('the promotion rule is invalid', errors);
  }
}

/** A basket that the contract refuses (pointers into the request body). */
export class BasketInvalid extends InvalidInput {
  override name = 'BasketInvalid';
  constructor(errors: readonly Violation[]) {
    super('the basket is invalid', errors);
  }
}

/** A redemption request that the contract refuses. */
export class RedemptionInvalid extends InvalidInput {
  override name = 'RedemptionInvalid';
  constructor(errors: readonly Violation[]) {
    super('the redemption request is invalid', errors);
  }
}

/** A promotion id that no stored rule has. */
export class PromotionNotFound extends Error {
  override name = 'PromotionNotFound';
  constructor(readonly promotionId: string) {
    super(`no promotion with id ${promotionId}`);
  }
}
