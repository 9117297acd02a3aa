/**
 * Public URLs and data URLs as request inputs (issue 11 item 7; spec 4.16 video `image`; issue 12,
 * spec 4.12 OCR, document analysis and vision): a route's `url_inputs` names the body fields that may
 * carry one. Run as a route step after `file_inputs` and before anything is reserved. An http(s) URL is
 * fetched by the SSRF-safe fetcher (every resolved address checked at connect time, redirects
 * re-checked, size and time capped, no client header sent; the operator's `url_inputs.allow_hosts`
 * apply); a data URL (or, with `base64`, plain base64) is decoded; a file a `file_inputs` rule put into
 * the field is taken as it is. The bytes are then sniffed: a type outside the field's list, or too many
 * bytes, is a 400 naming the field. The field (or, with `into`, the other field it names) ends up
 * holding a data URL of the verified type, so a translator sees one form and no vendor is handed a
 * client URL. With `probe: pages` the input's pages are counted for the meters (`files:/<field>`).
 */
import { parseDataUrl } from '../data-url.js';
import { sniffType } from '../files/sniff.js';
import { GatewayError } from '../errors.js';
import { documentPages } from '../files/verify/documents.js';
import type { RouteManifest } from '../generated/manifest-types.js';
import { fetchPublicUrl, type Resolver } from '../upstream/fetch/index.js';
import type { RequestContext } from './context.js';

type Policy = NonNullable<RouteManifest['url_inputs']>;
type Rule = Policy[string];

/** A data URL's payload: standard base64, padded or not (the declared type is only a claim: the bytes are sniffed). */
const PAYLOAD = /^[A-Za-z0-9+/]*={0,2}$/;

function refused(field: string, reason: string): GatewayError {
  return new GatewayError('invalid_request', `${field}: ${reason}`, { param: field });
}

/** The decoded bytes of a base64 data URL, refused past `maxBytes` before decoding. */
function decodeDataUrl(field: string, text: string, maxBytes: number): Buffer {
  const url = parseDataUrl(text);
  if (!url?.base64 || !PAYLOAD.test(url.payload)) throw refused(field, 'expected a data URL (data:<type>;base64,...) or an https URL.');
  const payload = url.payload;
  if (Math.floor((payload.length * 3) / 4) - (payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0) > maxBytes) {
    throw refused(field, `the input is larger than ${maxBytes} bytes.`);
  }
  return Buffer.from(payload, 'base64');
}

/** Plain base64 (`base64: true`): the alphabet, padded or not, nothing else. */
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** The bytes a field names: a file already resolved into it, a data URL, plain base64, or a fetched URL. */
async function bytesOf(ctx: RequestContext, field: string, value: string, rule: Rule, resolver: Resolver | undefined): Promise<Buffer> {
  if (ctx.inputFiles?.some((f) => f.field === field)) return Buffer.from(value, 'base64');
  if (/^data:/i.test(value)) return decodeDataUrl(field, value, rule.max_bytes);
  if (!/^https?:\/\//i.test(value)) {
    if (rule.base64 && BASE64.test(value)) return decodeDataUrl(field, `data:;base64,${value}`, rule.max_bytes);
    throw refused(field, rule.base64 ? 'expected base64, a data URL (data:<type>;base64,...) or an https URL.' : 'expected a data URL (data:<type>;base64,...) or an https URL.');
  }
  const allowHosts = ctx.gateway.settings.urlInputs.allowHosts;
  const fetched = await fetchPublicUrl(value, { param: field, maxBytes: rule.max_bytes, allowHosts, resolver });
  return fetched.bytes;
}

/** The verified bytes of one field under its rule: non-empty, within the size, of an accepted sniffed type. */
async function verified(ctx: RequestContext, field: string, value: unknown, rule: Rule, resolver: Resolver | undefined): Promise<{ bytes: Buffer; type: string }> {
  if (typeof value !== 'string' || value === '') throw refused(field, 'expected a data URL or an https URL.');
  const bytes = await bytesOf(ctx, field, value, rule, resolver);
  if (bytes.length === 0) throw refused(field, 'the input is empty.');
  if (bytes.length > rule.max_bytes) throw refused(field, `the input is larger than ${rule.max_bytes} bytes.`);
  const type = (await sniffType(bytes))?.mime;
  if (!type || !rule.content_types.includes(type)) {
    throw refused(field, `the content is ${type ?? 'not a recognised file type'}; expected ${rule.content_types.join(', ')}.`);
  }
  return { bytes, type };
}

/** `probe: pages`: the input's pages, kept as the facts the meters read as `files:/<field>`. */
async function probePages(ctx: RequestContext, field: string, bytes: Buffer, type: string): Promise<void> {
  const measured = await documentPages(bytes, type);
  if (!measured.ok) throw refused(field, measured.reason);
  ctx.inputFacts = { ...ctx.inputFacts, [field]: { size_bytes: bytes.length, pages: measured.pages } };
}

/** Resolves every URL input of the request into a data URL of verified bytes, under the route's policy. */
export async function resolveUrlInputs(ctx: RequestContext, policy: Policy, resolver?: Resolver): Promise<void> {
  // A field another rule's `into` just filled holds verified bytes already.
  const filled = new Set<string>();
  for (const [field, rule] of Object.entries(policy)) {
    const value = ctx.body[field];
    if (value === undefined || filled.has(field)) continue;
    const { bytes, type } = await verified(ctx, field, value, rule, resolver);
    const target = rule.into ?? field;
    if (rule.into !== undefined) {
      // The request schema's "exactly one input" says so first; this guards a schema that does not.
      if (ctx.body[rule.into] !== undefined) throw refused(field, `provide either '${field}' or '${rule.into}', not both.`);
      const { [field]: _url, ...rest } = ctx.body;
      ctx.body = rest;
    }
    if (rule.probe === 'pages') await probePages(ctx, target, bytes, type);
    ctx.body = { ...ctx.body, [target]: `data:${type};base64,${bytes.toString('base64')}` };
    filled.add(target);
  }
}
