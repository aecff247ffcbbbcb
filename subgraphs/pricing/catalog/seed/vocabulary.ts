/**
 * The words the generated catalog is made of: per category, its brands and its product types,
 * each type with the adjectives that make its titles, the option its variants differ by, and the
 * features its descriptions mention. Fictional brands; ordinary shop words, so that a search has
 * something real to find ("ergonomic office chair", "cordless drill", "organic coffee beans").
 */

/** How the variants of a product differ: each value one variant, in this order. */
export interface OptionKind {
  readonly name: string;
  readonly values: readonly string[];
  /** Price steps by value index (× the first variant's price): sizes cost more, colours do not. */
  readonly steps?: readonly number[];
}

export interface ProductType {
  /** The noun phrase of the title: "Mesh Office Chair". */
  readonly name: string;
  /** The second taxonomy level: "Chairs" (the first is the category's). */
  readonly shelf: string;
  readonly adjectives: readonly string[];
  readonly option: OptionKind;
  readonly features: readonly string[];
  readonly tags: readonly string[];
  /** What one costs, in US dollars, from and to. */
  readonly price: readonly [number, number];
}

export interface CategoryVocabulary {
  /** The SKU's category, as promotions match it. */
  readonly name: string;
  /** The description's last sentence. */
  readonly closing: string;
  /** The taxonomy's first level. */
  readonly title: string;
  readonly brands: readonly string[];
  readonly types: readonly ProductType[];
}

const COLOURS: OptionKind = { name: 'Color', values: ['Black', 'Grey', 'Blue', 'Red', 'White', 'Green'] };
const SIZES: OptionKind = { name: 'Size', values: ['S', 'M', 'L', 'XL'], steps: [1, 1, 1.05, 1.1] };
const SHOE_SIZES: OptionKind = { name: 'Size', values: ['40', '41', '42', '43', '44', '45'] };
const PACKS: OptionKind = {
  name: 'Pack',
  values: ['Single', 'Pack of 2', 'Pack of 4'],
  steps: [1, 1.85, 3.4],
};
const WEIGHTS: OptionKind = { name: 'Weight', values: ['250 g', '500 g', '1 kg'], steps: [1, 1.8, 3.2] };
const VOLUMES: OptionKind = { name: 'Volume', values: ['50 ml', '100 ml', '200 ml'], steps: [1, 1.6, 2.6] };
const FORMATS: OptionKind = {
  name: 'Format',
  values: ['Paperback', 'Hardcover', 'E-book'],
  steps: [1, 1.6, 0.7],
};
const FINISHES: OptionKind = { name: 'Finish', values: ['Oak', 'Walnut', 'White', 'Black'] };
const CAPACITIES: OptionKind = {
  name: 'Capacity',
  values: ['Standard', 'Large', 'Extra Large'],
  steps: [1, 1.25, 1.5],
};
const VOLTAGES: OptionKind = { name: 'Voltage', values: ['12V', '18V', '20V'], steps: [1, 1.3, 1.45] };
const LENGTHS: OptionKind = { name: 'Length', values: ['15 m', '25 m', '30 m'], steps: [1, 1.35, 1.55] };
const WEIGHT_PLATES: OptionKind = { name: 'Weight', values: ['2 kg', '5 kg', '10 kg'], steps: [1, 1.9, 3.3] };

/** Currencies the catalog prices in, the rate from USD, and the share of products priced in each. */
export const RATES: readonly (readonly [currency: string, rate: number, share: number])[] = [
  ['USD', 1, 1],
  ['EUR', 0.92, 1],
  ['GBP', 0.79, 0.8],
  ['CAD', 1.36, 0.5],
];

export const VOCABULARY: readonly CategoryVocabulary[] = [
  {
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
  },
  {
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
        features: [
          'thick recycled board',
          'poster included',
          'pieces that lock firmly',
          'for ages 10 and up',
        ],
        tags: ['puzzle', 'family', 'game'],
      },
      {
        name: 'Building Blocks Set',
        price: [14, 149],
        shelf: 'Construction',
        adjectives: ['Creative', 'Starter', 'City', 'Magnetic'],
        option: CAPACITIES,
        features: [
          'compatible with major brands',
          'storage box included',
          'BPA-free plastic',
          'idea booklet',
        ],
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
  },
  {
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
  },
  {
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
  },
  {
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
  },
  {
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
  },
  {
    name: 'home',
    closing: 'Ships fully assembled unless noted.',
    title: 'Home',
    brands: ['Hearthstone', 'Nook & Co', 'Linden Home', 'Brightside', 'Casa Verde'],
    types: [
      {
        name: 'Table Lamp',
        price: [19, 189],
        shelf: 'Lighting',
        adjectives: ['Dimmable', 'Ceramic', 'Brass', 'Minimalist'],
        option: FINISHES,
        features: ['warm LED bulb included', 'linen shade', 'touch dimmer', 'weighted base'],
        tags: ['lamp', 'lighting', 'decor'],
      },
      {
        name: 'Throw Blanket',
        price: [19, 129],
        shelf: 'Bedding',
        adjectives: ['Knitted', 'Fleece', 'Weighted', 'Wool'],
        option: COLOURS,
        features: ['soft chunky knit', 'machine washable', '130 × 170 cm', 'hypoallergenic'],
        tags: ['blanket', 'throw', 'cosy'],
      },
      {
        name: 'Ceramic Vase',
        price: [14, 89],
        shelf: 'Decor',
        adjectives: ['Handmade', 'Speckled', 'Tall', 'Glazed'],
        option: COLOURS,
        features: [
          'hand-thrown stoneware',
          'watertight glaze',
          'each one unique',
          'for fresh or dried flowers',
        ],
        tags: ['vase', 'decor', 'ceramic'],
      },
      {
        name: 'Wall Clock',
        price: [14, 99],
        shelf: 'Decor',
        adjectives: ['Silent', 'Scandinavian', 'Industrial', 'Oversized'],
        option: FINISHES,
        features: ['silent sweep movement', 'easy-read numerals', 'glass face', 'one AA battery'],
        tags: ['clock', 'wall', 'decor'],
      },
      {
        name: 'Bookshelf',
        price: [59, 399],
        shelf: 'Furniture',
        adjectives: ['Five-Tier', 'Ladder', 'Modular', 'Solid Wood'],
        option: FINISHES,
        features: ['solid wood shelves', 'anti-tip kit', 'tool-free assembly', 'holds 25 kg per shelf'],
        tags: ['bookshelf', 'furniture', 'storage'],
      },
    ],
  },
  {
    name: 'garden',
    closing: 'Suitable for every season.',
    title: 'Garden',
    brands: ['Greenthumb', 'Rootstock', 'Meadowlark', 'Fernhill', 'Dewpoint'],
    types: [
      {
        name: 'Garden Hose',
        price: [19, 79],
        shelf: 'Watering',
        adjectives: ['Expandable', 'Kink-Free', 'Heavy-Duty', 'Lightweight'],
        option: LENGTHS,
        features: ['brass fittings', 'spray nozzle included', 'UV resistant', 'kink-free design'],
        tags: ['hose', 'watering'],
      },
      {
        name: 'Ceramic Planter',
        price: [9, 69],
        shelf: 'Pots & Planters',
        adjectives: ['Glazed', 'Self-Watering', 'Hanging', 'Terracotta'],
        option: SIZES,
        features: ['drainage hole', 'frost resistant', 'saucer included', 'indoor and outdoor use'],
        tags: ['planter', 'pot', 'plants'],
      },
      {
        name: 'Pruning Shears',
        price: [9, 49],
        shelf: 'Garden Tools',
        adjectives: ['Bypass', 'Ratchet', 'Ergonomic', 'Precision'],
        option: CAPACITIES,
        features: ['hardened steel blades', 'safety lock', 'cuts branches to 20 mm', 'non-slip handles'],
        tags: ['shears', 'pruning', 'garden tool'],
      },
      {
        name: 'Vegetable Seed Kit',
        price: [6, 29],
        shelf: 'Seeds',
        adjectives: ['Heirloom', 'Organic', 'Balcony', 'Herb'],
        option: PACKS,
        features: ['non-GMO seeds', 'planting calendar', 'biodegradable pots', '12 varieties'],
        tags: ['seeds', 'vegetables', 'organic'],
      },
      {
        name: 'Leaf Rake',
        price: [12, 45],
        shelf: 'Garden Tools',
        adjectives: ['Telescopic', 'Steel', 'Wide', 'Lightweight'],
        option: CAPACITIES,
        features: ['adjustable handle', 'flexible tines', 'rust-proof', 'hanging hook'],
        tags: ['rake', 'garden tool', 'leaves'],
      },
    ],
  },
  {
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
  },
  {
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
  },
  {
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
  },
  {
    name: 'automotive',
    closing: 'Fits most cars; check the fit guide.',
    title: 'Automotive',
    brands: ['Milepost', 'Autogear', 'Piston & Co', 'Highway Pro', 'Trackline'],
    types: [
      {
        name: 'Wiper Blades',
        price: [9, 39],
        shelf: 'Exterior',
        adjectives: ['All-Season', 'Beam', 'Silicone', 'Winter'],
        option: SIZES,
        features: ['streak-free wipe', 'universal adapter', 'silicone edge', 'fits most cars'],
        tags: ['wipers', 'car', 'exterior'],
      },
      {
        name: 'Floor Mats',
        price: [19, 119],
        shelf: 'Interior',
        adjectives: ['All-Weather', 'Rubber', 'Custom-Fit', 'Carpet'],
        option: COLOURS,
        features: ['raised edges hold water', 'non-slip backing', 'trim to fit', 'easy to clean'],
        tags: ['floor mats', 'car', 'interior'],
      },
      {
        name: 'Jump Starter',
        price: [49, 199],
        shelf: 'Electrical',
        adjectives: ['Portable', 'Lithium', 'Heavy-Duty', 'Compact'],
        option: CAPACITIES,
        features: ['starts engines up to 6 litres', 'USB power bank', 'LED torch', 'spark-proof clamps'],
        tags: ['jump starter', 'battery', 'car'],
      },
      {
        name: 'Car Wax',
        price: [9, 39],
        shelf: 'Car Care',
        adjectives: ['Carnauba', 'Ceramic', 'Spray', 'Paste'],
        option: VOLUMES,
        features: ['deep gloss', 'water beading', 'lasts six months', 'applicator pad included'],
        tags: ['wax', 'car care', 'detailing'],
      },
      {
        name: 'Dash Cam',
        price: [39, 249],
        shelf: 'Electrical',
        adjectives: ['4K', 'Dual-Lens', 'Night Vision', 'Mini'],
        option: CAPACITIES,
        features: ['loop recording', 'G-sensor', 'wide 170-degree lens', 'parking mode'],
        tags: ['dash cam', 'camera', 'car'],
      },
    ],
  },
];
