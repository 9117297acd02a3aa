/**
 * What the simulator plays differently for the OpenAI-compatible vendors (issue 32 item 1), by model
 * family, since they share OpenAI's paths: Mistral's models end every stream with usage unasked and
 * refuse `stream_options` with a 422, as https://docs.mistral.ai/api does.
 */

const USAGE_UNASKED = /^(mistral-|codestral-|ministral-|magistral-|pixtral-|devstral-)/;

/** True for a model whose vendor always reports stream usage and refuses stream_options. */
export function streamsUsageUnasked(model: string): boolean {
  return USAGE_UNASKED.test(model);
}

/** Mistral's answer to a parameter it does not know (pydantic's extra_forbidden). */
export function extraForbidden(param: string): Record<string, unknown> {
  return { object: 'error', message: { detail: [{ type: 'extra_forbidden', loc: ['body', param], msg: 'Extra inputs are not permitted' }] }, type: 'invalid_request_error', param: null, code: null };
}
