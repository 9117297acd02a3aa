/**
 * The OpenAI Responses stream of a simulator answer: named server-sent events (`event: <type>` +
 * `data: {type, sequence_number, ...}`), numbered from 0, without a `[DONE]` terminator.
 */
import { namedEvent } from './exchange.js';
import { functionCallItem, messageItem, outputTextPart, responseBody, webSearchItem, type ResponsesAnswer } from './responses.js';
import { slices, type Rec } from './text.js';

/** The `error` event sent in place of event number `sequence` (fault `error_after_chunks`). */
export const responsesErrorEvent = (sequence: number): string =>
  namedEvent('error', { type: 'error', code: 'server_error', message: 'simulated upstream error', param: null, sequence_number: sequence });

/** The broken text delta of fault malformed_after_chunks (not valid JSON). */
export const RESPONSES_MALFORMED_EVENT = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta": oops\n\n';

/**
 * Every event of the stream in order: response.created, response.in_progress; per web search
 * output_item.added, web_search_call.in_progress / .searching / .completed, output_item.done; for the
 * message output_item.added, content_part.added, one output_text.delta per word, output_text.done,
 * content_part.done, output_item.done; for a function call output_item.added, three
 * function_call_arguments.delta, .done, output_item.done; finally response.completed or
 * response.incomplete with usage (null when `omitUsage`).
 */
export function responsesStreamEvents(a: ResponsesAnswer, omitUsage: boolean): string[] {
  const out: string[] = [];
  const emit = (type: string, fields: Rec) => out.push(namedEvent(type, { type, sequence_number: out.length, ...fields }));
  emit('response.created', { response: responseBody(a, false) });
  emit('response.in_progress', { response: responseBody(a, false) });
  let index = 0;
  for (const search of a.searches) {
    const at = { output_index: index, item_id: search.id };
    emit('response.output_item.added', { output_index: index, item: webSearchItem(search, 'in_progress') });
    emit('response.web_search_call.in_progress', at);
    emit('response.web_search_call.searching', at);
    emit('response.web_search_call.completed', at);
    emit('response.output_item.done', { output_index: index, item: webSearchItem(search, 'completed') });
    index += 1;
  }
  if (a.message) {
    const { id, text, words } = a.message;
    const at = { item_id: id, output_index: index, content_index: 0 };
    emit('response.output_item.added', { output_index: index, item: messageItem(a, 'in_progress', null) });
    emit('response.content_part.added', { ...at, part: outputTextPart('') });
    for (const word of words) emit('response.output_text.delta', { ...at, delta: word, logprobs: [] });
    emit('response.output_text.done', { ...at, text, logprobs: [] });
    emit('response.content_part.done', { ...at, part: outputTextPart(text) });
    emit('response.output_item.done', { output_index: index, item: messageItem(a, a.incomplete ? 'incomplete' : 'completed', text) });
  }
  if (a.call) {
    const at = { item_id: a.call.id, output_index: index };
    emit('response.output_item.added', { output_index: index, item: functionCallItem(a, 'in_progress', '') });
    for (const piece of slices(a.call.arguments, 3)) emit('response.function_call_arguments.delta', { ...at, delta: piece });
    emit('response.function_call_arguments.done', { ...at, name: a.call.name, arguments: a.call.arguments });
    emit('response.output_item.done', { output_index: index, item: functionCallItem(a, 'completed', a.call.arguments) });
  }
  emit(a.incomplete ? 'response.incomplete' : 'response.completed', { response: responseBody(a, true, omitUsage) });
  return out;
}
