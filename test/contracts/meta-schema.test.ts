/**
 * The schemas that ship with this system are checked against the JSON Schema 2020-12
 * meta-schema here, once, where the processes that compile them do not check them at each start
 * (lib/json/checked-schemas.ts): the OpenAPI documents, the vendored ACP release as each side
 * loads it, and every view of the vendored UCP release.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readAcpDocuments } from '../../gateway/agent/acp/schema/files.ts';
import { loadedCopy } from '../../gateway/agent/acp/schema/quirks.ts';
import { readUcpDocuments } from '../../gateway/agent/ucp/schema/files.ts';
import { UCP_OPERATIONS } from '../../gateway/agent/ucp/schema/index.ts';
import { documentView } from '../../gateway/agent/ucp/schema/views.ts';

const OPENAPI = new URL('../../schemas/openapi/', import.meta.url);

/**
 * What Ajv's own check on addSchema and compile does: the document against its meta-schema. One
 * instance for all: the meta-schema is compiled once, not once per document.
 */
const checker = new Ajv2020({ strict: false, allErrors: true });
function metaSchemaErrors(doc: unknown): string {
  return checker.validateSchema(doc as object) ? '' : checker.errorsText(checker.errors);
}

const openapi = readdirSync(OPENAPI)
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => [f, parse(readFileSync(new URL(f, OPENAPI), 'utf8'))] as const);
/**
 * The meta-schema reads an OpenAPI document's `components` as an unknown keyword, so each of its
 * schemas is checked on its own as well (the processes compile them by `$ref`).
 */
const components = openapi.flatMap(([file, doc]) =>
  Object.entries(
    (doc as { components?: { schemas?: Record<string, unknown> } }).components?.schemas ?? {},
  ).map(([name, schema]) => [`${file} ${name}`, schema] as const),
);
const acp = (['request', 'response'] as const).flatMap((side) =>
  Object.entries(loadedCopy(readAcpDocuments(), side)).map(
    ([name, doc]) => [`${side} ${name}`, doc] as const,
  ),
);
const ucp = readUcpDocuments().flatMap((doc) =>
  (['response', ...UCP_OPERATIONS] as const).map(
    (view) => [`${view} ${doc.schema.$id}`, documentView(doc, view).schema] as const,
  ),
);

describe('the shipped schemas against the JSON Schema 2020-12 meta-schema', () => {
  it('finds every family', () => {
    expect(openapi.map(([f]) => f)).toEqual(
      expect.arrayContaining([
        'agent.yaml',
        'edge.yaml',
        'operator.yaml',
        'procurement.yaml',
        'promotions.yaml',
      ]),
    );
    expect(components.length).toBeGreaterThan(50);
    // Four files (checkout bundle, discount, extension, cart) on two sides.
    expect(acp).toHaveLength(8);
    expect(ucp.length).toBeGreaterThan(20);
  });

  it.each([...openapi, ...components, ...acp, ...ucp])('%s is valid', (_, doc) => {
    expect(metaSchemaErrors(doc)).toBe('');
  });

  it('refuses what the processes no longer check at start (a keyword with a value of the wrong type)', () => {
    expect(metaSchemaErrors({ type: 'object', properties: { n: { type: 5 } } })).toMatch(/type/);
    expect(metaSchemaErrors({ required: 'id' })).toMatch(/required/);
  });
});
