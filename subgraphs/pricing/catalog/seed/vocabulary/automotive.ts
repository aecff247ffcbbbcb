/** The Automotive category's words (seed/vocabulary.ts). */
import { CAPACITIES, COLOURS, SIZES, VOLUMES } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const AUTOMOTIVE: CategoryVocabulary = {
  name: 'automotive',
  closing: 'Fits most cars; check the fit guide.',
  title: 'Automotive',
  brands: ['Milepost', 'Autogear', 'Piston & Co', 'Highway Pro', 'Trackline'],
  types: [
    {
      name: 'Wiper Blades',
      price: [9, 39],
      shelf: 'Exterior',
      adjectives: ['All-Season', 'Beam', 'Silicone', 'Winter'],
      option: SIZES,
      features: ['streak-free wipe', 'universal adapter', 'silicone edge', 'fits most cars'],
      tags: ['wipers', 'car', 'exterior'],
    },
    {
      name: 'Floor Mats',
      price: [19, 119],
      shelf: 'Interior',
      adjectives: ['All-Weather', 'Rubber', 'Custom-Fit', 'Carpet'],
      option: COLOURS,
      features: ['raised edges hold water', 'non-slip backing', 'trim to fit', 'easy to clean'],
      tags: ['floor mats', 'car', 'interior'],
    },
    {
      name: 'Jump Starter',
      price: [49, 199],
      shelf: 'Electrical',
      adjectives: ['Portable', 'Lithium', 'Heavy-Duty', 'Compact'],
      option: CAPACITIES,
      features: ['starts engines up to 6 litres', 'USB power bank', 'LED torch', 'spark-proof clamps'],
      tags: ['jump starter', 'battery', 'car'],
    },
    {
      name: 'Car Wax',
      price: [9, 39],
      shelf: 'Car Care',
      adjectives: ['Carnauba', 'Ceramic', 'Spray', 'Paste'],
      option: VOLUMES,
      features: ['deep gloss', 'water beading', 'lasts six months', 'applicator pad included'],
      tags: ['wax', 'car care', 'detailing'],
    },
    {
      name: 'Dash Cam',
      price: [39, 249],
      shelf: 'Electrical',
      adjectives: ['4K', 'Dual-Lens', 'Night Vision', 'Mini'],
      option: CAPACITIES,
      features: ['loop recording', 'G-sensor', 'wide 170-degree lens', 'parking mode'],
      tags: ['dash cam', 'camera', 'car'],
    },
  ],
};
