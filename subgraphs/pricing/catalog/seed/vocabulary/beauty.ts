/** The Beauty category's words (seed/vocabulary.ts). */
import { CAPACITIES, VOLUMES } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const BEAUTY: CategoryVocabulary = {
  name: 'beauty',
  closing: 'Cruelty-free and dermatologically tested.',
  title: 'Beauty',
  brands: ['Lumiere', 'Pure Botanica', 'Velvet & Vine', 'Aurora Skin', 'Seabright'],
  types: [
    {
      name: 'Vitamin C Serum',
      price: [12, 69],
      shelf: 'Skin Care',
      adjectives: ['Brightening', 'Hydrating', 'Anti-Ageing', 'Fragrance-Free'],
      option: VOLUMES,
      features: ['15% vitamin C', 'hyaluronic acid', 'dermatologist tested', 'vegan formula'],
      tags: ['serum', 'skin care', 'vitamin c'],
    },
    {
      name: 'Body Lotion',
      price: [6, 29],
      shelf: 'Body Care',
      adjectives: ['Shea Butter', 'Unscented', 'Intensive', 'Daily'],
      option: VOLUMES,
      features: ['48-hour moisture', 'fast absorbing', 'shea butter and oat', 'for dry skin'],
      tags: ['lotion', 'body care'],
    },
    {
      name: 'Shampoo',
      price: [5, 25],
      shelf: 'Hair Care',
      adjectives: ['Sulfate-Free', 'Volumising', 'Repairing', 'Anti-Dandruff'],
      option: VOLUMES,
      features: ['sulfate-free', 'argan oil', 'safe for coloured hair', 'recyclable bottle'],
      tags: ['shampoo', 'hair care'],
    },
    {
      name: 'Eau de Parfum',
      price: [29, 149],
      shelf: 'Fragrance',
      adjectives: ['Floral', 'Woody', 'Citrus', 'Amber'],
      option: VOLUMES,
      features: ['long-lasting', 'notes of bergamot and cedar', 'glass atomiser', 'gift box'],
      tags: ['perfume', 'fragrance'],
    },
    {
      name: 'Makeup Brush Set',
      price: [12, 59],
      shelf: 'Makeup',
      adjectives: ['Vegan', 'Professional', 'Travel', 'Bamboo'],
      option: CAPACITIES,
      features: ['synthetic bristles', 'bamboo handles', 'roll-up case', 'cruelty-free'],
      tags: ['brushes', 'makeup'],
    },
  ],
};
