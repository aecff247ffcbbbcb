/** The Office category's words (seed/vocabulary.ts). */
import { COLOURS, FINISHES, PACKS } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const OFFICE: CategoryVocabulary = {
  name: 'office',
  closing: 'Backed by a five-year warranty for daily office use.',
  title: 'Office',
  brands: ['Deskcraft', 'Ergoline', 'Papyrus', 'Workwell', 'Oakhurst'],
  types: [
    {
      name: 'Mesh Office Chair',
      price: [89, 599],
      shelf: 'Chairs',
      adjectives: ['Ergonomic', 'High-Back', 'Executive', 'Task'],
      option: COLOURS,
      features: ['adjustable lumbar support', 'breathable mesh back', '4D armrests', 'synchronised tilt'],
      tags: ['chair', 'office chair', 'ergonomic', 'seating'],
    },
    {
      name: 'Standing Desk',
      price: [179, 799],
      shelf: 'Desks',
      adjectives: ['Electric', 'Dual-Motor', 'Compact', 'Corner'],
      option: FINISHES,
      features: ['height from 70 to 120 cm', 'memory presets', 'anti-collision sensor', 'cable tray'],
      tags: ['desk', 'standing desk', 'ergonomic'],
    },
    {
      name: 'Spiral Notebook',
      price: [3, 19],
      shelf: 'Paper',
      adjectives: ['A5 Dotted', 'Recycled', 'Hardcover', 'Lined'],
      option: PACKS,
      features: ['100 gsm paper', 'lay-flat binding', 'numbered pages', 'elastic closure'],
      tags: ['notebook', 'paper', 'stationery'],
    },
    {
      name: 'Gel Pen Set',
      price: [3, 19],
      shelf: 'Writing',
      adjectives: ['Fine-Point', 'Retractable', 'Quick-Dry', 'Colour'],
      option: PACKS,
      features: ['0.5 mm tips', 'smudge-free ink', 'comfort grip', 'refillable'],
      tags: ['pens', 'writing', 'stationery'],
    },
    {
      name: 'Desk Organizer',
      price: [9, 49],
      shelf: 'Desk Accessories',
      adjectives: ['Bamboo', 'Mesh', 'Rotating', 'Modular'],
      option: FINISHES,
      features: ['five compartments', 'phone stand', 'non-slip feet', 'keeps cables tidy'],
      tags: ['organizer', 'desk', 'storage'],
    },
    {
      name: 'Heavy-Duty Stapler',
      price: [9, 49],
      shelf: 'Desk Accessories',
      adjectives: ['Electric', 'Long-Reach', 'Jam-Free', 'Compact'],
      option: COLOURS,
      features: ['staples 40 sheets', 'jam-free mechanism', 'built-in remover', 'non-slip base'],
      tags: ['stapler', 'office supplies'],
    },
  ],
};
