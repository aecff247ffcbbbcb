/**
 * The container image's entry point: one image, any role, chosen by the first argument or the
 * ROLE variable (the argument wins).
 *
 *   embedded     the whole system in one process (what `npm start` runs)
 *   gateway      the distributed gateway and edge (TOPOLOGY=distributed)
 *   pricing | promotions | procurement   one subgraph process
 *
 * Each role is the same main module `npm run start:*` runs; this file only picks one.
 */
import '../lib/source-maps.ts';

const ROLES = {
  embedded: () => {
    process.env.TOPOLOGY = 'embedded';
    return import('./main.ts');
  },
  gateway: () => {
    process.env.TOPOLOGY = 'distributed';
    return import('./main.ts');
  },
  pricing: () => import('../subgraphs/pricing/main.ts'),
  promotions: () => import('../subgraphs/promotions/main.ts'),
  procurement: () => import('../subgraphs/procurement/main.ts'),
} as const;

const isRole = (name: string): name is keyof typeof ROLES => Object.hasOwn(ROLES, name);

const name = process.argv[2] ?? process.env.ROLE ?? 'embedded';
if (!isRole(name)) {
  console.error(
    `Invalid configuration:\n  ROLE: unknown role "${name}"; one of ${Object.keys(ROLES).join(', ')}`,
  );
  process.exit(2);
}
process.env.ROLE = name;
await ROLES[name]();
