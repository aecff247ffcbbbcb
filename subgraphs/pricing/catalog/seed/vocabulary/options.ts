/** The options variants differ by, shared by the categories' product types. */
import type { OptionKind } from './types.ts';

export const COLOURS: OptionKind = {
  name: 'Color',
  values: ['Black', 'Grey', 'Blue', 'Red', 'White', 'Green'],
};
export const SIZES: OptionKind = { name: 'Size', values: ['S', 'M', 'L', 'XL'], steps: [1, 1, 1.05, 1.1] };
export const SHOE_SIZES: OptionKind = { name: 'Size', values: ['40', '41', '42', '43', '44', '45'] };
export const PACKS: OptionKind = {
  name: 'Pack',
  values: ['Single', 'Pack of 2', 'Pack of 4'],
  steps: [1, 1.85, 3.4],
};
export const WEIGHTS: OptionKind = {
  name: 'Weight',
  values: ['250 g', '500 g', '1 kg'],
  steps: [1, 1.8, 3.2],
};
export const VOLUMES: OptionKind = {
  name: 'Volume',
  values: ['50 ml', '100 ml', '200 ml'],
  steps: [1, 1.6, 2.6],
};
export const FORMATS: OptionKind = {
  name: 'Format',
  values: ['Paperback', 'Hardcover', 'E-book'],
  steps: [1, 1.6, 0.7],
};
export const FINISHES: OptionKind = { name: 'Finish', values: ['Oak', 'Walnut', 'White', 'Black'] };
export const CAPACITIES: OptionKind = {
  name: 'Capacity',
  values: ['Standard', 'Large', 'Extra Large'],
  steps: [1, 1.25, 1.5],
};
export const VOLTAGES: OptionKind = { name: 'Voltage', values: ['12V', '18V', '20V'], steps: [1, 1.3, 1.45] };
export const LENGTHS: OptionKind = {
  name: 'Length',
  values: ['15 m', '25 m', '30 m'],
  steps: [1, 1.35, 1.55],
};
export const WEIGHT_PLATES: OptionKind = {
  name: 'Weight',
  values: ['2 kg', '5 kg', '10 kg'],
  steps: [1, 1.9, 3.3],
};
