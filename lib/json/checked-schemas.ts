/**
 * Options for every Ajv instance over schemas that ship with this system (the OpenAPI documents
 * under schemas/openapi, the vendored ACP and UCP releases): Ajv does not check them against the
 * JSON Schema meta-schema at each start, because the suite does, once
 * (test/contracts/meta-schema.test.ts), and they cannot change between a test run and a start.
 *
 * Ajv compiles the meta-schema once per instance before its first check, and a gateway makes
 * about ten instances: measured by --cpu-prof, the checks were ~0.5 s of a distributed gateway's
 * start, and without them its CPU to listening went 2.89 → 2.55 s (median of 6 alternated
 * starts each). Compilation stays strict where it was (an unknown keyword still fails), so only
 * the meta-schema's own checks (a keyword's value of the wrong type, say) moved to the test.
 */
export const CHECKED_SCHEMAS = { validateSchema: false } as const;
