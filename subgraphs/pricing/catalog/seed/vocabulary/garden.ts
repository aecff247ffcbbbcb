/** The Garden category's words (seed/vocabulary.ts). */
import { CAPACITIES, LENGTHS, PACKS, SIZES } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const GARDEN: CategoryVocabulary = {
  name: 'garden',
  closing: 'Suitable for every season.',
  title: 'Garden',
  brands: ['Greenthumb', 'Rootstock', 'Meadowlark', 'Fernhill', 'Dewpoint'],
  types: [
    {
      name: 'Garden Hose',
      price: [19, 79],
      shelf: 'Watering',
      adjectives: ['Expandable', 'Kink-Free', 'Heavy-Duty', 'Lightweight'],
      option: LENGTHS,
      features: ['brass fittings', 'spray nozzle included', 'UV resistant', 'kink-free design'],
      tags: ['hose', 'watering'],
    },
    {
      name: 'Ceramic Planter',
      price: [9, 69],
      shelf: 'Pots & Planters',
      adjectives: ['Glazed', 'Self-Watering', 'Hanging', 'Terracotta'],
      option: SIZES,
      features: ['drainage hole', 'frost resistant', 'saucer included', 'indoor and outdoor use'],
      tags: ['planter', 'pot', 'plants'],
    },
    {
      name: 'Pruning Shears',
      price: [9, 49],
      shelf: 'Garden Tools',
      adjectives: ['Bypass', 'Ratchet', 'Ergonomic', 'Precision'],
      option: CAPACITIES,
      features: ['hardened steel blades', 'safety lock', 'cuts branches to 20 mm', 'non-slip handles'],
      tags: ['shears', 'pruning', 'garden tool'],
    },
    {
      name: 'Vegetable Seed Kit',
      price: [6, 29],
      shelf: 'Seeds',
      adjectives: ['Heirloom', 'Organic', 'Balcony', 'Herb'],
      option: PACKS,
      features: ['non-GMO seeds', 'planting calendar', 'biodegradable pots', '12 varieties'],
      tags: ['seeds', 'vegetables', 'organic'],
    },
    {
      name: 'Leaf Rake',
      price: [12, 45],
      shelf: 'Garden Tools',
      adjectives: ['Telescopic', 'Steel', 'Wide', 'Lightweight'],
      option: CAPACITIES,
      features: ['adjustable handle', 'flexible tines', 'rust-proof', 'hanging hook'],
      tags: ['rake', 'garden tool', 'leaves'],
    },
  ],
};
