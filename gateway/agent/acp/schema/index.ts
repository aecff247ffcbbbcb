/**
 * The ACP JSON Schema bundle (schemas/acp/<version>/), compiled once per definition with Ajv
 * 2020-12: request validation at run time, response validation in tests.
 */

export {
  formatJsonPath,
  jsonPathOfPointer,
  type PathSegment,
  parseJsonPath,
} from '../../../../lib/json/json-path.ts';
export { ACP_DIR, ACP_VERSION } from './files.ts';
export { MAX_ITEM_QUANTITY } from './quirks.ts';
export {
  ACP_FORMATS,
  type AcpCartDef,
  type AcpDef,
  type AcpValidate,
  acpCartValidator,
  acpRequestValidator,
  acpResponseValidator,
} from './validators.ts';
export type { AcpViolation } from './violations.ts';
