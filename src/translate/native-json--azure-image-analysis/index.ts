/**
 * The native vision request (spec 4.12) to Azure AI Vision Image Analysis 4.0
 * `POST /computervision/imageanalysis:analyze?api-version=2023-10-01` (operation `AnalyzeFromBuffer`
 * of ../shared/specs/azure/image-analysis/generated.json). `image` holds a data URL of verified bytes by
 * now (the route's `file_inputs` and `url_inputs` put a file or a fetched URL there): its bytes go as
 * the raw body, `application/octet-stream` (the only binary type the spec declares; the vendor finds the
 * format itself), never a URL. The selected features go in the `features` query as one comma-separated
 * value (`style: form, explode: false`), with the optional `language`, `gender-neutral-caption`,
 * `smartcrops-aspect-ratios` and `model-version`.
 *
 * Checked when the translator is created, so each refusal is a 400 before anything is reserved: an
 * unknown feature (features.ts), an option whose feature is not selected, and an image the vendor
 * cannot take (Image Analysis 4.0 input limits: under 20 MB, JPEG, PNG, GIF, BMP, WEBP or TIFF, sides
 * from 50 to 16,000 pixels; the vendor's own 400 says "The image dimension is not allowed to be smaller
 * than 50 and larger than 16000"). `quantities.features` (the meter's source) is the distinct selected
 * features: one transaction each, whatever the answer holds (spec 1). Errors are Azure.Core's.
 */
import { GatewayError } from '../../errors.js';
import { RawBody } from '../../upstream/raw-body.js';
import { azureCoreError } from '../upstream-error.js';
import { readImageInput, type ImageLimits } from '../image-input.js';
import type { Translator, TranslatorOptions } from '../types.js';
import { featureFields, imageFacts } from './answer.js';
import { selectedFeatures, type VisualFeature } from './features.js';

/** Image Analysis 4.0 input requirements (20,971,520 bytes at most; 50 to 16,000 pixels a side). */
export const IMAGE_ANALYSIS_LIMITS: ImageLimits = {
  maxBytes: 20 * 1024 * 1024, formats: ['jpeg', 'png', 'gif', 'bmp', 'webp', 'tiff'], minSide: 50, maxSide: 16_000,
};

/** An option that only means something with `feature` selected: refused without it (never silently ignored). */
function requireFeature(body: Record<string, unknown>, param: string, feature: VisualFeature, selected: readonly VisualFeature[]): void {
  if (body[param] !== undefined && !selected.includes(feature)) {
    throw new GatewayError('unsupported_parameter', `'${param}' applies to the ${feature} feature, which 'features' does not select.`, { param });
  }
}

/** The query values beyond `api-version`: the features and the options the client set. */
function queryOf(body: Record<string, unknown>, selected: readonly VisualFeature[]): Record<string, string[]> {
  const query: Record<string, string[]> = { features: [selected.join(',')] };
  if (typeof body.language === 'string') query.language = [body.language];
  if (typeof body.gender_neutral_caption === 'boolean') query['gender-neutral-caption'] = [String(body.gender_neutral_caption)];
  if (Array.isArray(body.smartcrops_aspect_ratios)) query['smartcrops-aspect-ratios'] = [body.smartcrops_aspect_ratios.map(String).join(',')];
  if (typeof body.model_version === 'string') query['model-version'] = [body.model_version];
  return query;
}

/** Creates the image analysis translator for one request. */
export function createNativeJsonToAzureImageAnalysis(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const selected = selectedFeatures(clientBody.features);
  requireFeature(clientBody, 'gender_neutral_caption', 'caption', selected);
  requireFeature(clientBody, 'smartcrops_aspect_ratios', 'smartCrops', selected);
  const image = readImageInput(clientBody.image, 'image', IMAGE_ANALYSIS_LIMITS);
  return {
    request: () => new RawBody(image.bytes, 'application/octet-stream'),
    query: (body) => queryOf(body, selected),
    response(upstream, clientModel) {
      if (!upstream || typeof upstream !== 'object' || Array.isArray(upstream)) throw new GatewayError('upstream_error', 'The upstream provider sent a malformed image analysis answer.');
      const features = selected.length;
      const body = { object: 'vision.analysis', model: clientModel, ...imageFacts(upstream), ...featureFields(upstream, selected), usage: { features } };
      return { body, usage: null, outputText: '', quantities: { features } };
    },
    stream: () => { throw new GatewayError('invalid_request', 'Image analysis does not stream.'); },
    error: azureCoreError,
  };
}
