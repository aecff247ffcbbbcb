import { readdirSync, readFileSync } from 'node:fs';
import { ACP_DIR } from '../../../gateway/agent/acp/schema/index.ts';

/** A vendored file of the ACP release, parsed (`examples/orders/simple-order.json`). */
export function acpJson<T = unknown>(path: string): T {
  return JSON.parse(readFileSync(new URL(path, ACP_DIR), 'utf8')) as T;
}

/** The names of the JSON files in a folder of the vendored release, sorted. */
export function acpJsonFiles(folder: string): string[] {
  return readdirSync(new URL(`${folder}/`, ACP_DIR))
    .filter((f) => f.endsWith('.json'))
    .sort();
}

/** A parsed copy of an example of examples.agentic_checkout.json (tests change their copy freely). */
export function checkoutExample(name: string): Record<string, unknown> {
  const examples = acpJson<Record<string, Record<string, unknown>>>(
    'examples/examples.agentic_checkout.json',
  );
  const example = examples[name];
  if (!example) throw new Error(`no ACP example ${name}`);
  return example;
}
