/** The Electronics category's words (seed/vocabulary.ts). */
import { CAPACITIES, COLOURS } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const ELECTRONICS: CategoryVocabulary = {
  name: 'electronics',
  closing: 'Comes with a two-year warranty and a USB-C cable.',
  title: 'Electronics',
  brands: ['Voltra', 'Sonique', 'Lumen Labs', 'Kestrel', 'Nordwave', 'Pixelon'],
  types: [
    {
      name: 'Wireless Headphones',
      price: [39, 349],
      shelf: 'Audio',
      adjectives: ['Noise Cancelling', 'Over-Ear', 'Studio', 'Foldable'],
      option: COLOURS,
      features: [
        'active noise cancelling',
        '30-hour battery life',
        'Bluetooth 5.3',
        'memory-foam ear cushions',
      ],
      tags: ['audio', 'bluetooth', 'headphones'],
    },
    {
      name: 'Bluetooth Speaker',
      price: [19, 199],
      shelf: 'Audio',
      adjectives: ['Portable', 'Waterproof', 'Rugged', 'Mini'],
      option: COLOURS,
      features: ['IP67 waterproof housing', '360-degree sound', '12-hour battery', 'pairs two speakers'],
      tags: ['audio', 'bluetooth', 'speaker'],
    },
    {
      name: 'USB-C Charger',
      price: [12, 69],
      shelf: 'Power',
      adjectives: ['Fast', 'Compact', 'Dual-Port', 'Travel'],
      option: CAPACITIES,
      features: [
        '65 W power delivery',
        'foldable plug',
        'charges a laptop and a phone at once',
        'GaN technology',
      ],
      tags: ['charger', 'usb-c', 'power'],
    },
    {
      name: 'Computer Monitor',
      price: [129, 899],
      shelf: 'Displays',
      adjectives: ['27-inch 4K', 'Curved', 'Ultrawide', 'Portable'],
      option: CAPACITIES,
      features: ['IPS panel', 'height-adjustable stand', 'USB-C input', 'low blue light mode'],
      tags: ['monitor', 'display', 'screen'],
    },
    {
      name: 'Mechanical Keyboard',
      price: [39, 229],
      shelf: 'Computer Accessories',
      adjectives: ['Wireless', 'Compact', 'Backlit', 'Low-Profile'],
      option: COLOURS,
      features: ['hot-swappable switches', 'RGB backlight', 'aluminium frame', 'USB-C cable'],
      tags: ['keyboard', 'computer', 'typing'],
    },
    {
      name: 'Wireless Mouse',
      price: [12, 99],
      shelf: 'Computer Accessories',
      adjectives: ['Ergonomic', 'Silent', 'Vertical', 'Travel'],
      option: COLOURS,
      features: ['ergonomic grip', 'silent clicks', 'rechargeable battery', 'works on glass'],
      tags: ['mouse', 'computer', 'ergonomic'],
    },
  ],
};
