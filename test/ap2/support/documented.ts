/** Replies checked against the component schemas procurement.yaml gives agents (as spend.e2e.test.ts does). */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { expect } from 'vitest';
import { procurementOpenApi } from '../../../subgraphs/procurement/contract/openapi.ts';

const ajv = new Ajv2020({ allErrors: true, strict: false });
(addFormats as unknown as (a: Ajv2020) => void)(ajv);
ajv.addSchema({ $id: 'procurement.yaml', components: procurementOpenApi().components });

export function documented(name: string, body: unknown): void {
  const validate = ajv.getSchema(`procurement.yaml#/components/schemas/${name}`);
  if (!validate) throw new Error(`no schema ${name}`);
  expect(validate(body), JSON.stringify(validate.errors)).toBe(true);
}
