/** The Tools category's words (seed/vocabulary.ts). */
import { CAPACITIES, VOLTAGES, WEIGHTS } from './options.ts';
import type { CategoryVocabulary } from './types.ts';

export const TOOLS: CategoryVocabulary = {
  name: 'tools',
  closing: 'Covered by a three-year tool warranty.',
  title: 'Tools',
  brands: ['Ironside', 'Forgewell', 'Torque & Steel', 'Bullseye', 'Craftline'],
  types: [
    {
      name: 'Cordless Drill',
      price: [49, 299],
      shelf: 'Power Tools',
      adjectives: ['Compact', 'Brushless', 'Heavy-Duty', 'Hammer'],
      option: VOLTAGES,
      features: ['two lithium-ion batteries', 'keyless chuck', '21 torque settings', 'LED work light'],
      tags: ['drill', 'cordless', 'power tool'],
    },
    {
      name: 'Socket Wrench Set',
      price: [19, 149],
      shelf: 'Hand Tools',
      adjectives: ['Metric', 'Ratcheting', 'Professional', '40-Piece'],
      option: CAPACITIES,
      features: ['chrome vanadium steel', 'quick-release ratchet', 'moulded case', 'lifetime warranty'],
      tags: ['wrench', 'socket', 'hand tool'],
    },
    {
      name: 'Claw Hammer',
      price: [9, 39],
      shelf: 'Hand Tools',
      adjectives: ['Fibreglass', 'Anti-Vibration', 'Forged', 'Framing'],
      option: WEIGHTS,
      features: ['forged steel head', 'shock-absorbing grip', 'magnetic nail starter', 'balanced weight'],
      tags: ['hammer', 'hand tool'],
    },
    {
      name: 'Circular Saw',
      price: [69, 329],
      shelf: 'Power Tools',
      adjectives: ['Cordless', 'Compact', 'Laser-Guided', 'Heavy-Duty'],
      option: VOLTAGES,
      features: ['185 mm blade', 'bevel cuts to 45 degrees', 'dust extraction port', 'laser guide'],
      tags: ['saw', 'power tool', 'woodworking'],
    },
    {
      name: 'Screwdriver Set',
      price: [9, 59],
      shelf: 'Hand Tools',
      adjectives: ['Precision', 'Magnetic', 'Insulated', 'Ratchet'],
      option: CAPACITIES,
      features: ['magnetic tips', 'cushioned handles', 'storage case', 'Phillips and flat heads'],
      tags: ['screwdriver', 'hand tool'],
    },
  ],
};
