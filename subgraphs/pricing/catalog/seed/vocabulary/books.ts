/** The Books category's words (seed/vocabulary.ts). */
import { FORMATS } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const BOOKS: CategoryVocabulary = {
  name: 'books',
  closing: 'Printed on paper from responsibly managed forests.',
  title: 'Books',
  brands: ['Quill House', 'Northlight Press', 'Paperlane', 'Atlas & Ink', 'Folio Books'],
  types: [
    {
      name: 'Mystery Novel',
      price: [6, 24],
      shelf: 'Fiction',
      adjectives: ['Bestselling', 'Nordic', 'Classic', 'Award-Winning'],
      option: FORMATS,
      features: ['a gripping plot', 'a detective series opener', 'over 400 pages', 'a twist ending'],
      tags: ['novel', 'mystery', 'fiction'],
    },
    {
      name: 'Cookbook',
      price: [12, 45],
      shelf: 'Food & Drink',
      adjectives: ['Vegetarian', 'Italian', 'Weeknight', 'Baking'],
      option: FORMATS,
      features: ['120 recipes', 'full-colour photographs', 'step-by-step techniques', 'seasonal menus'],
      tags: ['cookbook', 'recipes', 'cooking'],
    },
    {
      name: 'World Atlas',
      price: [15, 79],
      shelf: 'Reference',
      adjectives: ['Illustrated', 'Concise', 'Family', 'Historical'],
      option: FORMATS,
      features: ['up-to-date maps', 'country facts', 'a gazetteer index', 'satellite imagery'],
      tags: ['atlas', 'maps', 'reference'],
    },
    {
      name: 'Travel Guide',
      price: [8, 29],
      shelf: 'Travel',
      adjectives: ['Pocket', 'Hiking', 'City', 'Budget'],
      option: FORMATS,
      features: ['walking routes', 'fold-out map', 'local food tips', 'itineraries for every budget'],
      tags: ['travel', 'guide'],
    },
    {
      name: 'Poetry Anthology',
      price: [9, 35],
      shelf: 'Poetry',
      adjectives: ['Modern', 'Classic', 'Illustrated', 'Bilingual'],
      option: FORMATS,
      features: [
        'poems from 80 authors',
        'an introduction by the editor',
        'notes on each poet',
        'a ribbon marker',
      ],
      tags: ['poetry', 'anthology'],
    },
  ],
};
