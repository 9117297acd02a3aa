/**
 * Model aliases (issue 31 item 4): the other ids an offering answers to (`aliases:`, e.g. a vendor's
 * dated id), one namespace with the offerings' ids. Checked at load as duplicate offering ids are
 * (src/config/deployments.ts), across every provider: an alias that is another offering's id or
 * alias would make a model id ambiguous, so it stops the load naming both offerings. Requests look a
 * client's model id up with modelById; configuration (fallbacks, route defaults) names offering ids.
 */
import { ManifestError } from './errors.js';
import type { OfferingSource } from './deployments.js';
import type { CompiledGateway, CompiledOffering } from './types.js';

/** The aliases of every offering, alias to offering; throws on a clash with an id or another alias. */
export function compileAliases(offerings: ReadonlyMap<string, CompiledOffering>, sources: ReadonlyMap<string, OfferingSource>): Map<string, CompiledOffering> {
  const aliases = new Map<string, CompiledOffering>();
  for (const offering of offerings.values()) {
    (offering.aliases ?? []).forEach((alias, j) => {
      const { source, index } = sources.get(offering.id)!;
      const at = `/offerings/${index}/aliases/${j}`;
      const owner = offerings.get(alias);
      const other = aliases.get(alias);
      const clash = owner === offering ? 'its own id'
        : owner ? `the id of offering "${owner.id}" (${sources.get(owner.id)!.source.file})`
        : other ? `already an alias of offering "${other.id}" (${sources.get(other.id)!.source.file}; a copied offering must drop its \`aliases\`)`
        : null;
      if (clash) throw new ManifestError(source.file, at, `alias "${alias}" of offering "${offering.id}" is ${clash}`, source.lineOf(at));
      aliases.set(alias, offering);
    });
  }
  return aliases;
}

/** The offering a client's model id names: an offering id or one of its aliases; undefined when neither. */
export function modelById(gateway: Pick<CompiledGateway, 'offerings' | 'aliases'>, id: string): CompiledOffering | undefined {
  return gateway.offerings.get(id) ?? gateway.aliases.get(id);
}

/**
 * The model id an answer names (issue 31 item 4): the alias the client asked for when the offering
 * that serves is the one it names, else the serving offering's id (a fallback's answer says who
 * answered). The SDKs read the answer's `model` as the id they asked for; usage rows keep the id.
 */
export function answerModelId(offering: CompiledOffering, asked: unknown): string {
  return typeof asked === 'string' && (offering.aliases ?? []).includes(asked) ? asked : offering.id;
}
