/**
 * Runs the AI-safety ruleset over OpenAPI documents with Spectral's JS API (one process, the
 * ruleset built once: spawning the CLI per document costs seconds).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Document, Spectral } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import { ruleset } from './ruleset.ts';

export type Severity = 'error' | 'warn' | 'info' | 'hint';
const SEVERITIES: readonly Severity[] = ['error', 'warn', 'info', 'hint'];

export interface Finding {
  readonly file: string;
  readonly rule: string;
  readonly severity: Severity;
  readonly message: string;
  /** JSON path inside the document, e.g. `paths./v2/orders.post.responses`. */
  readonly path: string;
  /** 1-based line in the file. */
  readonly line: number;
}

let spectral: Spectral | undefined;
function linter(): Spectral {
  if (!spectral) {
    spectral = new Spectral();
    spectral.setRuleset(ruleset);
  }
  return spectral;
}

/** Lints one document given as text; `file` names it in findings and resolves relative $refs. */
export async function lintText(text: string, file: string): Promise<Finding[]> {
  const results = await linter().run(new Document(text, Parsers.Yaml, resolve(file)), {
    ignoreUnknownFormat: true,
  });
  return results
    .map((r) => ({
      file,
      rule: String(r.code),
      severity: SEVERITIES[r.severity] ?? 'error',
      message: r.message,
      path: r.path.join('.'),
      line: r.range.start.line + 1,
    }))
    .sort((a, b) => a.line - b.line || a.rule.localeCompare(b.rule));
}

export const lintFile = (file: string): Promise<Finding[]> => lintText(readFileSync(file, 'utf8'), file);

export const errorsOf = (findings: readonly Finding[]) => findings.filter((f) => f.severity === 'error');
