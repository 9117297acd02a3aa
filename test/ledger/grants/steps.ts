/** The random steps of the grant model test (model.test.ts): which book, what, and two numbers to pick with. */
import fc from 'fast-check';

/** One step. `n` picks among the book's open requests; `amount` is a quote, a charge, a delay or a top-up. */
export interface Step {
  kind: 'admit' | 'tick' | 'finish' | 'fail' | 'flush' | 'lose' | 'cut' | 'crash' | 'advance' | 'sweep' | 'topup' | 'refund';
  book: number;
  n: number;
  amount: number;
}

const kind = fc.oneof(
  { weight: 8, arbitrary: fc.constant<Step['kind']>('admit') },
  { weight: 4, arbitrary: fc.constant<Step['kind']>('tick') },
  { weight: 6, arbitrary: fc.constant<Step['kind']>('finish') },
  { weight: 2, arbitrary: fc.constant<Step['kind']>('fail') },
  { weight: 4, arbitrary: fc.constant<Step['kind']>('flush') },
  { weight: 1, arbitrary: fc.constant<Step['kind']>('lose') },
  { weight: 1, arbitrary: fc.constant<Step['kind']>('cut') },
  { weight: 1, arbitrary: fc.constantFrom<Step['kind']>('crash', 'admit') },
  { weight: 5, arbitrary: fc.constant<Step['kind']>('advance') },
  { weight: 2, arbitrary: fc.constant<Step['kind']>('sweep') },
  { weight: 1, arbitrary: fc.constant<Step['kind']>('topup') },
  { weight: 1, arbitrary: fc.constant<Step['kind']>('refund') },
);

/** A step: admissions quote up to 0.15 of the draw cap; delays mostly a flush interval, now and then 1.5 leases. */
export const GRANT_STEPS: fc.Arbitrary<Step> = fc.record({
  kind,
  book: fc.nat({ max: 2 }),
  n: fc.nat({ max: 1000 }),
  amount: fc.integer({ min: 1, max: 1_500 }),
}).map((s) => {
  if (s.kind === 'admit') return { ...s, amount: s.amount * 20 };
  if (s.kind === 'advance') return { ...s, amount: s.n % 10 === 0 ? s.amount : 100 };
  return s;
});
