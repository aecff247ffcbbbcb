import { readFileSync } from 'node:fs';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { distinctViolations, violationOf } from '../../lib/json/ajv-violation.ts';
import { CHECKED_SCHEMAS } from '../../lib/json/checked-schemas.ts';
import type { Violation } from './domain/errors.ts';

/**
 * schemas/openapi/promotions.yaml is the one source of the REST shapes: request bodies are
 * validated by schemas compiled from it at start-up, never restated in code.
 */
export const PROMOTIONS_OPENAPI_URL = new URL('../../schemas/openapi/promotions.yaml', import.meta.url);
const DOC_ID = 'promotions.yaml';

export interface PromotionsContract {
  pricedBasket: ValidateFunction;
  redemptionRequest: ValidateFunction;
  releaseRequest: ValidateFunction;
  /** Replies, for tests: what the document promises is what the service sends. */
  promotionEvaluation: ValidateFunction;
  redemptionResult: ValidateFunction;
  releaseResult: ValidateFunction;
  problem: ValidateFunction;
}

let compiled: PromotionsContract | undefined;

export function promotionsContract(): PromotionsContract {
  if (compiled) return compiled;
  const doc = parse(readFileSync(PROMOTIONS_OPENAPI_URL, 'utf8')) as Record<string, unknown>;
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; `examples` and `description` are annotations.
  const ajv = new Ajv2020({ ...CHECKED_SCHEMAS, allErrors: true, strict: false });
  // int32 and friends are real formats here, not annotations Ajv warns about.
  addFormats.default(ajv);
  ajv.addSchema(doc, DOC_ID);
  const ref = (name: string) => ajv.compile({ $ref: `${DOC_ID}#/components/schemas/${name}` });
  compiled = {
    pricedBasket: ref('PricedBasket'),
    redemptionRequest: ref('RedemptionRequest'),
    releaseRequest: ref('ReleaseRequest'),
    releaseResult: ref('ReleaseResult'),
    promotionEvaluation: ref('PromotionEvaluation'),
    redemptionResult: ref('RedemptionResult'),
    problem: ref('Problem'),
  };
  return compiled;
}

/** Ajv errors as violations with JSON pointers; a failed `oneOf` (money) is reported once. */
export const violations = (errors: readonly ErrorObject[] | null | undefined): Violation[] =>
  distinctViolations(errors, (e) =>
    e.schemaPath.includes('/Money/') && e.keyword !== 'additionalProperties' && e.keyword !== 'required'
      ? { pointer: e.instancePath, message: 'must be an amount from 0 to 10,000,000 with at most 2 decimals' }
      : violationOf(e),
  );
