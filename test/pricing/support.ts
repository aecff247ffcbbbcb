import { readFileSync } from 'node:fs';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

/** Validator of a JSON Schema in schemas/events/. */
export function eventSchema(name: string) {
  const ajv = new Ajv2020({ allErrors: true, strict: false });
  addFormats.default(ajv);
  const schema = JSON.parse(readFileSync(new URL(`../../schemas/events/${name}`, import.meta.url), 'utf8'));
  return ajv.compile(schema);
}

/** Polls until `check` stops throwing (events cross a stream asynchronously); fails after ~10 s. */
export async function eventually<T>(check: () => T | Promise<T>, attempts = 200): Promise<T> {
  let last: unknown;
  for (let i = 0; i < attempts; i++) {
    try {
      return await check();
    } catch (err) {
      last = err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  throw last;
}

export function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
