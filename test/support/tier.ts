/**
 * The two tiers of the reliability suites. `npm test` (CI) runs the short tier; `npm run
 * test:soak` sets TEST_TIER=soak and runs the same suites longer and wider. A suite picks its
 * sizes with `byTier(short, soak)`, so both tiers run the same code.
 */
export type Tier = 'short' | 'soak';

export const tier: Tier = process.env.TEST_TIER === 'soak' ? 'soak' : 'short';

export function byTier<T>(short: T, soak: T): T {
  return tier === 'soak' ? soak : short;
}
