/**
 * The output a finished job names by URL (provider manifest `poll.output`; spec 4.14 flex images):
 * the URL must satisfy the host rule (src/upstream/vendor-url.ts), the bytes are downloaded without
 * credentials and bounded (src/upstream/download.ts), their type is sniffed (never the vendor's
 * header) and must be one the manifest lists, an image is measured from its header
 * (src/files/verify/dimensions.ts), and the bytes are kept in temporary private storage that expires
 * (src/files/outputs.ts; spec 8 "Generated output lifetime 24 hours"). Any failure is a 502, nothing
 * charged.
 */
import { sniffType } from '../../files/sniff.js';
import type { CompiledPollOutput } from '../../config/types.js';
import { GatewayError } from '../../errors.js';
import { imageDimensions } from '../../files/verify/dimensions.js';
import { readPointer } from '../../meters/pointer.js';
import type { GeneratedOutput } from '../../translate/types.js';
import { downloadOutput } from '../../upstream/download.js';
import { allowedVendorUrl } from '../../upstream/vendor-url.js';
import type { RequestContext } from '../context.js';
import { requestOrigin } from '../local/temp-files.js';
import type { Runtime } from '../stage.js';

/** The output's purpose in the store, by its sniffed type. */
const purposeOf = (contentType: string): 'IMAGE_OUTPUT' | 'VIDEO_OUTPUT' => (contentType.startsWith('video/') ? 'VIDEO_OUTPUT' : 'IMAGE_OUTPUT');

/** Sniffs and measures downloaded bytes; a type the manifest does not list, or an unreadable image, is a 502. */
export async function inspectOutput(data: Buffer, spec: CompiledPollOutput): Promise<{ contentType: string; width: number; height: number }> {
  const contentType = (await sniffType(data))?.mime;
  if (!contentType || !spec.contentTypes.has(contentType)) {
    throw new GatewayError('upstream_error', `The upstream provider's output is ${contentType ?? 'not a recognised file type'}; expected ${[...spec.contentTypes].join(' or ')}.`);
  }
  if (!contentType.startsWith('image/')) return { contentType, width: 0, height: 0 };
  const size = imageDimensions(data);
  if (!size) throw new GatewayError('upstream_error', 'The upstream provider\'s output image has an unreadable header.');
  return { contentType, ...size };
}

/** Downloads, checks and stores the output the finished job `result` names. */
export async function fetchOutput(ctx: RequestContext, runtime: Runtime, spec: CompiledPollOutput, result: unknown): Promise<GeneratedOutput> {
  const provider = ctx.model!.provider;
  const url = allowedVendorUrl(readPointer(result, spec.pointer), provider.baseUrl, spec.hosts, 'download location');
  const files = runtime.files;
  if (!files?.outputs) throw new GatewayError('internal_error', 'This gateway has no storage for generated outputs.');
  const data = await downloadOutput(url, { maxBytes: spec.maxBytes, signal: ctx.work.signal, timeouts: provider.timeouts });
  const { contentType, width, height } = await inspectOutput(data, spec);
  const stored = await files.outputs.store({ accountId: ctx.auth!.accountId, purpose: purposeOf(contentType), contentType, data, origin: requestOrigin(ctx, files) });
  return { url: stored.url, expiresAt: stored.expiresAt, contentType, byteSize: stored.byteSize, width, height, data };
}
