/** The Toys category's words (seed/vocabulary.ts). */
import { CAPACITIES, COLOURS, PACKS, SIZES } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const TOYS: CategoryVocabulary = {
  name: 'toys',
  closing: 'Tested to EN 71 toy safety standards.',
  title: 'Toys',
  brands: ['Playfield', 'Tinker & Co', 'Bright Owl', 'Marble Works', 'Kiddo'],
  types: [
    {
      name: 'Jigsaw Puzzle',
      price: [9, 39],
      shelf: 'Puzzles',
      adjectives: ['1000-Piece', 'Landscape', 'Family', 'Wooden'],
      option: PACKS,
      features: ['thick recycled board', 'poster included', 'pieces that lock firmly', 'for ages 10 and up'],
      tags: ['puzzle', 'family', 'game'],
    },
    {
      name: 'Building Blocks Set',
      price: [14, 149],
      shelf: 'Construction',
      adjectives: ['Creative', 'Starter', 'City', 'Magnetic'],
      option: CAPACITIES,
      features: ['compatible with major brands', 'storage box included', 'BPA-free plastic', 'idea booklet'],
      tags: ['blocks', 'building', 'creative'],
    },
    {
      name: 'Remote Control Car',
      price: [24, 129],
      shelf: 'Vehicles',
      adjectives: ['Off-Road', 'High-Speed', 'Stunt', 'Monster'],
      option: COLOURS,
      features: ['2.4 GHz remote', 'rechargeable battery', 'all-terrain tyres', '25 km/h top speed'],
      tags: ['rc', 'car', 'outdoor'],
    },
    {
      name: 'Plush Teddy Bear',
      price: [9, 59],
      shelf: 'Soft Toys',
      adjectives: ['Cuddly', 'Classic', 'Giant', 'Organic Cotton'],
      option: SIZES,
      features: ['machine washable', 'safety-stitched eyes', 'hypoallergenic filling', 'gift box'],
      tags: ['plush', 'teddy', 'gift'],
    },
    {
      name: 'Kite',
      price: [8, 49],
      shelf: 'Outdoor Play',
      adjectives: ['Stunt', 'Delta', 'Rainbow', 'Beach'],
      option: COLOURS,
      features: ['ripstop nylon', 'fibreglass frame', '30 m line included', 'easy to launch'],
      tags: ['kite', 'outdoor', 'beach'],
    },
  ],
};
