/**
 * What the line judge's look for unstorable text costs (feed/line.ts: U+0000, lone surrogates),
 * against judging the line whole: `tsx bench/catalog/line-checks.ts [lines] [rounds]`. The lines
 * are the ACP example product (examples.feed.json), renamed and given a title that is not
 * Latin-1 (as a real feed's often is: V8 then holds the line as two-byte text), none holding an
 * escape. Prints per round the milliseconds of each, the first round warming up.
 */
import { readFileSync } from 'node:fs';
import { mayHoldLoneSurrogate } from '../../lib/json/well-formed.ts';
import { judgeLine } from '../../subgraphs/pricing/catalog/feed/line.ts';

const count = Number(process.argv[2] ?? 14408);
const rounds = Number(process.argv[3] ?? 5);
const example = (
  JSON.parse(
    readFileSync(
      new URL('../../schemas/acp/2026-04-17/examples/examples.feed.json', import.meta.url),
      'utf8',
    ),
  ) as { upsert_products_request_single_product: { products: Record<string, unknown>[] } }
).upsert_products_request_single_product.products[0];
const lines = Array.from({ length: count }, (_, i) =>
  JSON.stringify({ ...example, id: `p-${i}`, title: `Prodüct ${i} – naïve` }),
);

const ms = (from: bigint) => (Number(process.hrtime.bigint() - from) / 1e6).toFixed(1);
console.log(`${count} lines of ${Buffer.byteLength(lines[0] ?? '')} bytes`);
for (let round = 0; round < rounds; round++) {
  let t = process.hrtime.bigint();
  let flagged = 0;
  for (const l of lines) if (mayHoldLoneSurrogate(l) || l.includes('\\u0000')) flagged++;
  const look = ms(t);
  t = process.hrtime.bigint();
  for (const l of lines) judgeLine(l);
  console.log(`round ${round}: the look ${look} ms (${flagged} lines walked), judgeLine ${ms(t)} ms`);
}
