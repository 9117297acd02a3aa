/**
 * The native moderation request (spec 4.11) with `image` (base64 or a data URL; a `file_id` was put
 * inline by the route's `file_inputs`) to Azure AI Content Safety
 * `POST /contentsafety/image:analyze?api-version=2024-09-01` (docs/vendors/anthropic-files.md
 * section 3; `AnalyzeImageOptions {image: {content}, categories?}`). The image is checked when the
 * translator is created, so every refusal is a 400 naming `image` before anything is reserved:
 * invalid base64, more than 4 MiB decoded, not PNG, JPEG, GIF, BMP, TIFF or WEBP by its magic bytes,
 * a side under 50 or over 2048 pixels where the header tells (`ImageData`'s limits). The bytes go
 * as canonical base64 (a data URL's prefix stripped); `outputType` is left at the vendor's only value.
 * The answer is the same moderation response as for text (src/translate/azure-content-safety.ts).
 */
import { categoriesOf, contentSafetyTranslator } from '../azure-content-safety.js';
import { readImageInput, type ImageLimits } from '../image-input.js';
import type { Translator, TranslatorOptions } from '../types.js';

/** `ImageData`: "should not exceed 4 MB", "2048 x 2048 pixels" at most, "50 x 50 pixels" at least. */
export const CONTENT_SAFETY_IMAGE_LIMITS: ImageLimits = {
  maxBytes: 4 * 1024 * 1024, formats: ['png', 'jpeg', 'gif', 'bmp', 'tiff', 'webp'], minSide: 50, maxSide: 2048,
};

/** Creates the image moderation translator for one request. */
export function createNativeJsonToAzureContentSafetyImage(clientBody: Record<string, unknown>, _options?: TranslatorOptions): Translator {
  const image = readImageInput(clientBody.image, 'image', CONTENT_SAFETY_IMAGE_LIMITS);
  return contentSafetyTranslator((body) => ({ image: { content: image.base64 }, ...categoriesOf(body) }));
}
