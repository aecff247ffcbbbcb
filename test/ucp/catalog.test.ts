/**
 * The UCP catalog capabilities over REST (catalog/rest.md) as a platform that knows only the
 * published specification uses them: search, lookup, product detail, each answer valid against
 * the vendored schemas; then the item found is checked out and completed on account. One system
 * for all of it; the parts are in ./catalog/ (support.ts: the context they share).
 */
import { buyingTests } from './catalog/buying.ts';
import { lookupTests } from './catalog/lookup.ts';
import { searchTests } from './catalog/search.ts';
import { specExampleTests } from './catalog/spec-examples.ts';
import { catalogContext } from './catalog/support.ts';

/** The parts in the order they ran as one file, on one system. */
const ctx = catalogContext();
searchTests(ctx);
lookupTests(ctx);
specExampleTests(ctx);
buyingTests(ctx);
