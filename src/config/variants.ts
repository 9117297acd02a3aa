/**
 * Compiles an offering's `billing.variants` (issue 31 item 8): each `when` value as text (a multipart
 * field arrives as text), each price in nano-USD. Refused at load: a variant no request can reach (an
 * earlier one has the same `when`), and variants on a VIDEO offering, whose job is billed by the
 * poller after its request is gone (src/videos/poller.ts prices with the one price).
 */
import type { ProviderManifest } from '../generated/manifest-types.js';
import { parseUsd } from '../money.js';
import { ManifestError } from './errors.js';
import type { PriceVariant } from './types.js';

type OfferingManifest = ProviderManifest['offerings'][number];

/** The key two variants with the same `when` share. */
function whenKey(when: Readonly<Record<string, string>>): string {
  return JSON.stringify(Object.entries(when).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** The offering's variants, compiled and checked; empty when it has one price. */
export function compileVariants(file: string, index: number, o: OfferingManifest): PriceVariant[] {
  const listed = o.billing.variants ?? [];
  const at = `/offerings/${index}/billing/variants`;
  if (listed.length > 0 && o.service_type === 'VIDEO') throw new ManifestError(file, at, 'a VIDEO offering is billed after its request is gone (the job poller): it takes one `price`');
  const seen = new Map<string, number>();
  return listed.map((v, j) => {
    const when = Object.fromEntries(Object.entries(v.when).map(([name, value]) => [name, String(value)]));
    const key = whenKey(when);
    if (seen.has(key)) throw new ManifestError(file, `${at}/${j}/when`, `variant ${j} has the same \`when\` as variant ${seen.get(key)}, which always prices it first`);
    seen.set(key, j);
    let price: bigint;
    try { price = parseUsd(v.price); } catch (error) { throw new ManifestError(file, `${at}/${j}/price`, (error as Error).message); }
    return { when, price, priceText: v.price };
  });
}
