/**
 * Our transcribed wire types against a discovery document: walks one of our JSON Schemas (with its
 * own `$defs`) and a discovery schema side by side and lists where ours allows what the vendor's
 * does not define: a member the vendor's message lacks, a type it does not take (an integer where it
 * wants a number is fine, the reverse is not), an enum value it does not list, or an object (or the
 * items of an array) ours leaves open where the vendor's message is closed. A stub (`{}`) or `type: "any"` accepts anything.
 */
import type { DiscoveryExcerpt, DiscoverySchema, JsonSchema } from './discovery-schema.js';

const isSchema = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON types a discovery schema takes (int64 strings also as integers, numbers also as integers). */
function theirTypes(t: DiscoverySchema): string[] {
  if (t.type === 'string' && (t.format === 'int64' || t.format === 'uint64')) return ['string', 'integer'];
  if (t.type === 'number') return ['number', 'integer'];
  return t.type === undefined ? ['object'] : [t.type];
}

/** The JSON types one of our schemas allows, or null when it allows any value. */
function ourTypes(o: JsonSchema): string[] | null {
  if (typeof o.type === 'string') return [o.type];
  if (Array.isArray(o.type)) return o.type as string[];
  if (Array.isArray(o.enum)) return [...new Set(o.enum.map((v) => (v === null ? 'null' : Number.isInteger(v) ? 'integer' : typeof v)))];
  if (isSchema(o.properties)) return ['object'];
  return null;
}

/**
 * Where `ours` (a JSON Schema document with `$defs`, walked from `$defs[oursRoot]`) allows something
 * that `excerpt.schemas[theirsRoot]` does not; `omitted` are theirs-root members that are not body
 * members (bound to the URL). An empty list means every member ours allows exists with a compatible type.
 */
export function requestDifferences(ours: JsonSchema, oursRoot: string, excerpt: DiscoveryExcerpt, theirsRoot: string, omitted: readonly string[] = []): string[] {
  const defs = (ours.$defs ?? {}) as Record<string, JsonSchema>;
  const out: string[] = [];
  const seen = new Set<string>();

  const walk = (o: JsonSchema, t: DiscoverySchema, name: string, at: string): void => {
    for (let hops = 0; typeof o.$ref === 'string' && hops < 16; hops++) o = defs[o.$ref.replace('#/$defs/', '')] ?? {};
    if (t.$ref !== undefined) {
      name = t.$ref;
      if (excerpt.stubbed.includes(name)) return;
      const key = `${at}|${name}`;
      if (seen.has(key)) return;
      seen.add(key);
      t = excerpt.schemas[name] ?? {};
    }
    if (t.type === 'any' || Object.keys(t).length === 0) return;
    const mine = ourTypes(o);
    const theirs = theirTypes(t);
    if (mine === null) { out.push(`${at}: ours allows any value, ${name} wants ${theirs.join(' or ')}`); return; }
    const wrong = mine.filter((m) => !theirs.includes(m));
    if (wrong.length > 0) out.push(`${at}: ours allows ${wrong.join(', ')}, ${name} wants ${theirs.join(' or ')}`);
    if (Array.isArray(o.enum) && t.enum !== undefined) {
      const extra = o.enum.filter((v) => !t.enum!.includes(v as string));
      if (extra.length > 0) out.push(`${at}: ours allows ${extra.map((v) => JSON.stringify(v)).join(', ')}, not values of ${name}`);
    }
    if (mine.includes('object')) {
      const theirProps = t.properties ?? {};
      for (const [member, sub] of Object.entries((o.properties ?? {}) as Record<string, JsonSchema>)) {
        const path = `${at}.${member}`;
        const theirsSub = at === '' && omitted.includes(member) ? undefined : theirProps[member];
        if (theirsSub !== undefined) walk(sub, theirsSub, name, path);
        else if (t.additionalProperties !== undefined) walk(sub, t.additionalProperties, name, path);
        else out.push(`${path}: not a body member of ${name}`);
      }
      if (o.additionalProperties !== false && t.properties !== undefined && t.additionalProperties === undefined) {
        out.push(`${at || '(root)'}: ours takes members ${name} does not define`);
      }
      if (isSchema(o.additionalProperties) && t.additionalProperties !== undefined) walk(o.additionalProperties, t.additionalProperties, name, `${at}.*`);
    }
    if (mine.includes('array') && t.items !== undefined) {
      if (isSchema(o.items)) walk(o.items, t.items, name, `${at}[]`);
      else if (t.items.type !== 'any') out.push(`${at}[]: ours allows any item, ${name} wants ${t.items.$ref ?? t.items.type}`);
    }
  };

  const root = excerpt.schemas[theirsRoot];
  if (!root) throw new Error(`the excerpt has no schema ${theirsRoot}`);
  walk({ $ref: `#/$defs/${oursRoot}` }, root, theirsRoot, '');
  return out;
}
