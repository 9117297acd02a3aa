/**
 * Configuration variants measured beside the gateway on PostgreSQL, on the chat phases (like the
 * baseline commit): each a private copy of the project's manifests with one edit, run as its own
 * gateway on its own database.
 *  - `post: immediate` (issue 30): every answer waits for its own post of its charge;
 *  - two weighted deployments (issue 29): gpt-4o-mini and claude-haiku-4-5 each served by two
 *    deployments of their provider, weights 1 and 1, so every request runs the weighted choice.
 */
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { ROOT } from './config.mjs';

/** A copy of gateway.config.yaml, routes/, providers/ and schemas/ with `edit(file, doc)` applied to each YAML it names. */
function copyWith(edits) {
  const dir = mkdtempSync(join(tmpdir(), 'gw-bench-config-'));
  for (const item of ['gateway.config.yaml', 'routes', 'providers', 'schemas']) cpSync(join(ROOT, item), join(dir, item), { recursive: true });
  for (const file of signingProviderFiles(dir)) rmSync(join(dir, 'providers', file));
  for (const [file, edit] of Object.entries(edits)) {
    const doc = parse(readFileSync(join(dir, file), 'utf8'));
    edit(doc);
    writeFileSync(join(dir, file), stringify(doc));
  }
  return join(dir, 'gateway.config.yaml');
}

/** Two deployments of the offering's own provider, weights 1 and 1 (the second named apart). */
function twoWeighted(doc, id, provider) {
  const offering = doc.offerings.find((o) => o.id === id);
  const model = offering.upstream_model ?? id;
  offering.deployments = [
    { provider, upstream_model: model, weight: 1 },
    { id: `${provider}/${model}@2`, provider, upstream_model: model, weight: 1 },
  ];
}

/**
 * The providers whose requests are signed or carry an exchanged token (auth schemes `sigv4` and
 * `google-service-account`: Bedrock, Vertex): the bench cannot make them live on its simulator with a
 * placeholder key, and a simulated one would start a simulator inside the measured gateway. No
 * benchmarked model is on them, so the bench's configurations leave them out.
 */
export function signingProviderFiles(root) {
  return readdirSync(join(root, 'providers')).filter((f) => f.endsWith('.yaml'))
    .filter((f) => ['sigv4', 'google-service-account'].includes(parse(readFileSync(join(root, 'providers', f), 'utf8')).auth?.scheme));
}

/** The project's configuration without the signing providers: what every gateway of this build runs with. */
export function benchConfig() {
  return copyWith({});
}

/** The variants: id, label, and the GATEWAY_CONFIG each runs with. */
export function benchVariants() {
  return [
    {
      id: 'gw-immediate', label: 'Gateway, PostgreSQL, billing.grants.post: immediate',
      config: copyWith({ 'gateway.config.yaml': (doc) => { doc.billing = { ...doc.billing, grants: { ...doc.billing?.grants, post: 'immediate' } }; } }),
    },
    {
      id: 'gw-weighted', label: 'Gateway, PostgreSQL, two weighted deployments per model',
      config: copyWith({
        'providers/openai.yaml': (doc) => twoWeighted(doc, 'gpt-4o-mini', 'openai'),
        'providers/anthropic.yaml': (doc) => twoWeighted(doc, 'claude-haiku-4-5', 'anthropic'),
      }),
    },
  ];
}
