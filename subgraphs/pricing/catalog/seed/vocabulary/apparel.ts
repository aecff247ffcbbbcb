/** The Apparel category's words (seed/vocabulary.ts). */
import { COLOURS, SHOE_SIZES, SIZES } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const APPAREL: CategoryVocabulary = {
  name: 'apparel',
  closing: 'Free returns within 30 days.',
  title: 'Apparel',
  brands: ['Northfold', 'Loomwell', 'Saltmarsh', 'Urban Thread', 'Alpenrose'],
  types: [
    {
      name: 'Rain Jacket',
      price: [39, 249],
      shelf: 'Outerwear',
      adjectives: ['Waterproof', 'Packable', 'Lightweight', 'Insulated'],
      option: SIZES,
      features: ['taped seams', 'adjustable hood', 'breathable membrane', 'zipped pockets'],
      tags: ['jacket', 'rain', 'outdoor'],
    },
    {
      name: 'Cotton T-Shirt',
      price: [9, 39],
      shelf: 'Tops',
      adjectives: ['Organic', 'Classic', 'Relaxed-Fit', 'Crew-Neck'],
      option: SIZES,
      features: ['100% organic cotton', 'pre-shrunk fabric', 'reinforced seams', 'tagless collar'],
      tags: ['t-shirt', 'cotton', 'basics'],
    },
    {
      name: 'Wool Scarf',
      price: [15, 99],
      shelf: 'Accessories',
      adjectives: ['Merino', 'Chunky', 'Striped', 'Cashmere-Blend'],
      option: COLOURS,
      features: ['soft merino wool', 'fringed ends', 'warm and light', 'gift-ready'],
      tags: ['scarf', 'wool', 'winter'],
    },
    {
      name: 'Running Shoes',
      price: [49, 179],
      shelf: 'Footwear',
      adjectives: ['Lightweight', 'Trail', 'Cushioned', 'Road'],
      option: SHOE_SIZES,
      features: [
        'responsive foam midsole',
        'breathable mesh upper',
        'grippy rubber outsole',
        'reflective details',
      ],
      tags: ['running', 'shoes', 'sneakers'],
    },
    {
      name: 'Hooded Sweatshirt',
      price: [24, 89],
      shelf: 'Tops',
      adjectives: ['Fleece', 'Zip-Up', 'Oversized', 'Recycled'],
      option: SIZES,
      features: ['brushed fleece lining', 'kangaroo pocket', 'ribbed cuffs', 'recycled polyester blend'],
      tags: ['hoodie', 'sweatshirt', 'casual'],
    },
  ],
};
