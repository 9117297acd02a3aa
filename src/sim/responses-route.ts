/** The OpenAI Responses route of the simulator: `POST /v1/responses` (JSON or stream, with faults). */
import type { SimRoute } from './exchange.js';
import { openaiError, openaiFaultResponse, unparsableJson } from './openai-route.js';
import { answerResponses, responseBody, validateResponsesRequest } from './responses.js';
import type { SimResponseStore } from './responses-store.js';
import { RESPONSES_MALFORMED_EVENT, responsesErrorEvent, responsesStreamEvents } from './responses-stream.js';

/** `POST /v1/responses`: each Response created is kept in `store` (unless `store: false`), as OpenAI keeps it. */
export const responsesRoute = (store: SimResponseStore): SimRoute => ({
  faultResponse: openaiFaultResponse,
  async handle(x) {
    if (!x.parsed) return x.sendJson(400, unparsableJson());
    const valid = validateResponsesRequest(x.body);
    if (!valid.ok) return x.sendJson(400, openaiError(valid.error.message, 'invalid_request_error', valid.error.param, valid.error.code));
    const answer = answerResponses(valid.value, x.raw, x.fault.answer_words);
    if (!answer.ok) return x.sendJson(400, openaiError(answer.error.message, 'invalid_request_error', answer.error.param, answer.error.code));
    const omitUsage = x.fault.omit_usage === true;
    const headers = { 'x-request-id': `req_sim_${answer.value.id.slice('resp_sim'.length)}` };
    store.keep(x.body as Record<string, unknown>, responseBody(answer.value, true, omitUsage));
    if (valid.value.stream !== true) return x.sendJson(200, responseBody(answer.value, true, omitUsage), headers);
    await x.stream(responsesStreamEvents(answer.value, omitUsage), { error: responsesErrorEvent, finalEvent: true, malformed: RESPONSES_MALFORMED_EVENT }, headers);
  },
});
