/**
 * Bedrock's error answers as the client's errors (anthropic-messages--bedrock-converse `converseError`,
 * shared by the chat and responses chains): the type in `x-amzn-errortype`, the message in `{message}`.
 */
import { describe, expect, it } from 'vitest';
import { converseError } from '../../src/translate/anthropic-messages--bedrock-converse/index.js';

const typed = (type: string) => ({ 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` });

describe('converseError', () => {
  it('maps each Bedrock error to the gateway table', () => {
    const cases: Array<[number, string, string, { code: string; status: number }]> = [
      [400, 'ValidationException', 'Input is too long for requested model.', { code: 'context_length_exceeded', status: 400 }],
      [400, 'ValidationException', 'The model returned the following errors: bad field', { code: 'invalid_request', status: 400 }],
      [403, 'AccessDeniedException', 'You don\u2019t have access to the model with the specified model ID.', { code: 'upstream_error', status: 502 }],
      [403, 'InvalidSignatureException', 'The request signature we calculated does not match', { code: 'upstream_error', status: 502 }],
      [408, 'ModelTimeoutException', 'Model has timed out in processing the request.', { code: 'upstream_timeout', status: 504 }],
      [424, 'ModelErrorException', 'The system encountered an unexpected error during processing.', { code: 'upstream_error', status: 502 }],
      [429, 'ThrottlingException', 'Too many requests, please wait before trying again.', { code: 'upstream_rate_limited', status: 429 }],
      [503, 'ServiceUnavailableException', 'Bedrock is unable to process your request.', { code: 'upstream_error', status: 502 }],
    ];
    for (const [status, type, message, want] of cases) {
      const error = converseError(status, { message }, typed(type));
      expect({ code: error.code, status: error.status }, `${status} ${type}`).toEqual(want);
    }
  });

  it('never shows the vendor text of a credential refusal', () => {
    expect(converseError(403, { message: 'The security token included in the request is invalid.' }, typed('UnrecognizedClientException')).message).not.toMatch(/token/);
  });
});
