/** A broken responses stream ends with an `error` event numbered after the last event the client saw. */
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { createOpenaiResponsesToOpenaiResponses } from '../../../src/translate/openai-responses--openai-responses/index.js';
import { SseParser } from '../../../src/translate/sse.js';

describe('responses passthrough error frame', () => {
  it('continues the sequence numbers', () => {
    const stream = createOpenaiResponsesToOpenaiResponses({}, { params: {} }).stream('gpt-4o');
    for (const n of [0, 1, 2]) stream.push({ event: 'response.output_text.delta', data: JSON.stringify({ type: 'response.output_text.delta', delta: 'x', sequence_number: n }) });
    const [event] = new SseParser().push(stream.errorFrame!(new GatewayError('upstream_error', 'cut')));
    expect(event!.event).toBe('error');
    expect(JSON.parse(event!.data)).toEqual({ type: 'error', code: 'upstream_error', message: 'cut', param: null, sequence_number: 3 });
  });
});
