/** The Sports category's words (seed/vocabulary.ts). */
import { COLOURS, SIZES, WEIGHT_PLATES } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const SPORTS: CategoryVocabulary = {
  name: 'sports',
  closing: 'Tested by club coaches.',
  title: 'Sports',
  brands: ['Peakform', 'Stride', 'Ironclad Fitness', 'Zenflow', 'Summit'],
  types: [
    {
      name: 'Yoga Mat',
      price: [14, 99],
      shelf: 'Yoga',
      adjectives: ['Non-Slip', 'Extra Thick', 'Travel', 'Cork'],
      option: COLOURS,
      features: ['6 mm cushioning', 'non-slip texture', 'carry strap', 'free of PVC'],
      tags: ['yoga', 'mat', 'fitness'],
    },
    {
      name: 'Dumbbell',
      price: [9, 59],
      shelf: 'Strength Training',
      adjectives: ['Hex', 'Neoprene', 'Adjustable', 'Rubber-Coated'],
      option: WEIGHT_PLATES,
      features: [
        'knurled chrome handle',
        'rubber coating protects floors',
        'sold individually',
        'hex shape does not roll',
      ],
      tags: ['dumbbell', 'weights', 'strength'],
    },
    {
      name: 'Football',
      price: [12, 49],
      shelf: 'Team Sports',
      adjectives: ['Match', 'Training', 'Indoor', 'Beach'],
      option: SIZES,
      features: ['machine-stitched panels', 'butyl bladder', 'holds air for weeks', 'FIFA size 5'],
      tags: ['football', 'soccer', 'ball'],
    },
    {
      name: 'Tennis Racket',
      price: [29, 229],
      shelf: 'Racket Sports',
      adjectives: ['Graphite', 'Junior', 'Pro', 'Lightweight'],
      option: SIZES,
      features: ['graphite frame', 'pre-strung', 'cover included', 'vibration dampener'],
      tags: ['tennis', 'racket'],
    },
    {
      name: 'Cycling Helmet',
      price: [29, 199],
      shelf: 'Cycling',
      adjectives: ['Aero', 'Commuter', 'MIPS', 'Mountain Bike'],
      option: SIZES,
      features: ['MIPS protection', 'adjustable fit dial', '18 vents', 'rear LED light'],
      tags: ['helmet', 'cycling', 'safety'],
    },
  ],
};
