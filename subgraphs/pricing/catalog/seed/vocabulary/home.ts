/** The Home category's words (seed/vocabulary.ts). */
import { COLOURS, FINISHES } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const HOME: CategoryVocabulary = {
  name: 'home',
  closing: 'Ships fully assembled unless noted.',
  title: 'Home',
  brands: ['Hearthstone', 'Nook & Co', 'Linden Home', 'Brightside', 'Casa Verde'],
  types: [
    {
      name: 'Table Lamp',
      price: [19, 189],
      shelf: 'Lighting',
      adjectives: ['Dimmable', 'Ceramic', 'Brass', 'Minimalist'],
      option: FINISHES,
      features: ['warm LED bulb included', 'linen shade', 'touch dimmer', 'weighted base'],
      tags: ['lamp', 'lighting', 'decor'],
    },
    {
      name: 'Throw Blanket',
      price: [19, 129],
      shelf: 'Bedding',
      adjectives: ['Knitted', 'Fleece', 'Weighted', 'Wool'],
      option: COLOURS,
      features: ['soft chunky knit', 'machine washable', '130 × 170 cm', 'hypoallergenic'],
      tags: ['blanket', 'throw', 'cosy'],
    },
    {
      name: 'Ceramic Vase',
      price: [14, 89],
      shelf: 'Decor',
      adjectives: ['Handmade', 'Speckled', 'Tall', 'Glazed'],
      option: COLOURS,
      features: [
        'hand-thrown stoneware',
        'watertight glaze',
        'each one unique',
        'for fresh or dried flowers',
      ],
      tags: ['vase', 'decor', 'ceramic'],
    },
    {
      name: 'Wall Clock',
      price: [14, 99],
      shelf: 'Decor',
      adjectives: ['Silent', 'Scandinavian', 'Industrial', 'Oversized'],
      option: FINISHES,
      features: ['silent sweep movement', 'easy-read numerals', 'glass face', 'one AA battery'],
      tags: ['clock', 'wall', 'decor'],
    },
    {
      name: 'Bookshelf',
      price: [59, 399],
      shelf: 'Furniture',
      adjectives: ['Five-Tier', 'Ladder', 'Modular', 'Solid Wood'],
      option: FINISHES,
      features: ['solid wood shelves', 'anti-tip kit', 'tool-free assembly', 'holds 25 kg per shelf'],
      tags: ['bookshelf', 'furniture', 'storage'],
    },
  ],
};
