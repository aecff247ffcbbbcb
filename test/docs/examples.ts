/**
 * The shell examples of README.md and docs/*.md, as a reader copies them: fenced `sh`/`bash`
 * blocks, and bare blocks that hold an HTTP request line (`GET /cart/quote?…`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Example {
  /** `README.md:75`: the file and the line of the opening fence. */
  where: string;
  kind: 'shell' | 'request';
  text: string;
}

const FENCE = /^```(\w*)\s*$/;

export function examplesOf(file: string, label: string): Example[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i] as string);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && l.startsWith('```'));
    if (end < 0) break;
    const text = lines.slice(i + 1, end).join('\n');
    const lang = open[1] ?? '';
    if (['sh', 'bash', 'shell', 'console'].includes(lang))
      out.push({ where: `${label}:${i + 1}`, kind: 'shell', text });
    else if (lang === '' && /^(GET|POST|PUT|PATCH|DELETE) \//.test(text))
      out.push({ where: `${label}:${i + 1}`, kind: 'request', text });
    i = end;
  }
  return out;
}

/** Every example of the README and the docs/ pages. */
export function allExamples(root: string): Example[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort();
  return [
    ...examplesOf(join(root, 'README.md'), 'README.md'),
    ...docs.flatMap((f) => examplesOf(join(root, 'docs', f), `docs/${f}`)),
  ];
}

/** A request-line example (`GET /path?a=1\n   &b=2`) as one method and path. */
export function requestLine(text: string): { method: string; path: string } {
  const joined = text
    .split('\n')
    .map((l) => l.trim())
    .join('');
  const [method = '', path = ''] = joined.split(/\s+/);
  return { method, path };
}

/** Environment assignments in a shell example (`NAME=value`, `export A=1 B=2`). */
export const assignedNames = (text: string): string[] =>
  [...text.replace(/'[^']*'|"[^"]*"/g, '""').matchAll(/(?:^|[\s;&(])([A-Z][A-Z0-9_]*)=/gm)].map(
    (m) => m[1] as string,
  );

/** Inline request templates with a query (`GET /cart/quote?line=…[&customerId=…]`) and their parameter names. */
export function inlineQueryTemplates(
  root: string,
): { where: string; method: string; path: string; params: string[] }[] {
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  return files.flatMap((file) =>
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        [...line.matchAll(/`(GET|POST|PUT|PATCH|DELETE) (\/[^`?\s]*)\?([^`]*)`/g)].map((m) => ({
          where: `${file}:${i + 1}`,
          method: (m[1] as string).toLowerCase(),
          path: m[2] as string,
          params: [
            ...new Set(
              [...(m[3] as string).matchAll(/(?:^|[&[])([A-Za-z_][\w]*)=/g)].map((p) => p[1] as string),
            ),
          ],
        })),
      ),
  );
}
