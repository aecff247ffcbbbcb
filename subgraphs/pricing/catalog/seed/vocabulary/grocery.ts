/** The Grocery category's words (seed/vocabulary.ts). */
import { VOLUMES, WEIGHTS } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const GROCERY: CategoryVocabulary = {
  name: 'grocery',
  closing: 'Packed in recyclable packaging.',
  title: 'Grocery',
  brands: ['Green Valley', 'Harvest Moon', 'Old Mill', 'Sunfield', 'Terra Nova'],
  types: [
    {
      name: 'Coffee Beans',
      price: [7, 29],
      shelf: 'Coffee & Tea',
      adjectives: ['Organic', 'Single-Origin', 'Dark Roast', 'Espresso'],
      option: WEIGHTS,
      features: ['whole beans', 'fair-trade sourced', 'notes of chocolate and cherry', 'roasted weekly'],
      tags: ['coffee', 'beans', 'organic'],
    },
    {
      name: 'Extra Virgin Olive Oil',
      price: [6, 34],
      shelf: 'Pantry',
      adjectives: ['Cold-Pressed', 'Organic', 'Greek', 'Early Harvest'],
      option: VOLUMES,
      features: ['first cold pressing', 'peppery finish', 'dark glass bottle', 'single estate'],
      tags: ['olive oil', 'pantry', 'cooking'],
    },
    {
      name: 'Loose Leaf Tea',
      price: [4, 24],
      shelf: 'Coffee & Tea',
      adjectives: ['Green', 'Earl Grey', 'Herbal', 'Breakfast'],
      option: WEIGHTS,
      features: ['whole leaves', 'resealable tin', 'caffeine-free options', 'brews three cups per spoon'],
      tags: ['tea', 'loose leaf'],
    },
    {
      name: 'Durum Wheat Pasta',
      price: [2, 9],
      shelf: 'Pantry',
      adjectives: ['Bronze-Cut', 'Whole Wheat', 'Gluten-Free', 'Artisan'],
      option: WEIGHTS,
      features: ['bronze-die extruded', 'slow dried', 'holds sauce well', 'made in Italy'],
      tags: ['pasta', 'pantry'],
    },
    {
      name: 'Raw Honey',
      price: [5, 29],
      shelf: 'Pantry',
      adjectives: ['Wildflower', 'Manuka', 'Organic', 'Creamed'],
      option: WEIGHTS,
      features: ['unfiltered', 'from local beekeepers', 'glass jar', 'rich floral taste'],
      tags: ['honey', 'sweetener'],
    },
  ],
};
