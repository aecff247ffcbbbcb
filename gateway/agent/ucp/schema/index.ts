/**
 * The UCP release (schemas/ucp/v<version>/), compiled with Ajv 2020-12 per view (response, or
 * the request of an operation): response validation in tests, request validation at run time.
 */
export { formatJsonPath, jsonPathOfPointer, parseJsonPath } from '../../../../lib/json/json-path.ts';
export { UCP_DIR, UCP_VERSION } from './files.ts';
export { UCP_OPERATIONS, type UcpOperation } from './keywords.ts';
export {
  UCP_DEFS,
  UCP_FORMATS,
  type UcpDef,
  type UcpValidate,
  type UcpViolation,
  ucpCatalogValidator,
  ucpValidator,
} from './validators.ts';
export type { UcpView } from './views.ts';
