/**
 * The naive peer (naive-gateway.ts) as a process of its own, so a profile can read its CPU
 * apart from the load generator's: `node --import tsx bench/peers/naive-gateway-main.ts` with
 * PRICING_URL, PROMOTIONS_URL, PROCUREMENT_URL and GATEWAY_SHARED_SECRET set. Logs the line
 * harness/processes.ts waits for.
 */
import { startNaiveGateway } from './naive-gateway.ts';

const env = (name: string): string => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is required`);
  return v;
};

const naive = await startNaiveGateway(
  { pricing: env('PRICING_URL'), promotions: env('PROMOTIONS_URL'), procurement: env('PROCUREMENT_URL') },
  env('GATEWAY_SHARED_SECRET'),
);
console.log(JSON.stringify({ msg: `listening on ${naive.url}` }));
process.once('SIGTERM', () => void naive.close().then(() => process.exit(0)));
