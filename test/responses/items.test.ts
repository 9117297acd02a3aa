/** Stored input items and their pages (src/responses/items.ts; issue 31 item 3). */
import { describe, expect, it } from 'vitest';
import { conversationOf, inputItems, itemPage } from '../../src/responses/items.js';

describe('input items', () => {
  it('gives each item an id and a type, a string content one text part', () => {
    const [one, two] = inputItems([{ role: 'assistant', content: 'hi' }, { type: 'function_call_output', call_id: 'c', output: 'x', id: 'fco_1' }]);
    expect(one).toMatchObject({ id: expect.stringMatching(/^msg_/), type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hi' }] });
    expect(two).toEqual({ type: 'function_call_output', call_id: 'c', output: 'x', id: 'fco_1' });
    expect(inputItems('hello')).toMatchObject([{ type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hello' }] }]);
  });

  it('continues a response with its context, its input, then its output', () => {
    const previous = { id: 'r', accountId: 'a', providerId: null, createdAt: new Date(0), expiresAt: new Date(1), context: [{ id: 'c0' }], inputItems: [{ id: 'i0' }], response: { output: [{ id: 'o0' }] } };
    expect(conversationOf(previous).map((i) => i.id)).toEqual(['c0', 'i0', 'o0']);
  });

  it('pages newest first by default, after an id, with has_more at the edges', () => {
    const items = ['a', 'b', 'c'].map((id) => ({ id }));
    expect(itemPage(items, 2, 'desc', null)).toEqual({ object: 'list', data: [{ id: 'c' }, { id: 'b' }], first_id: 'c', last_id: 'b', has_more: true });
    expect(itemPage(items, 2, 'desc', 'b')).toEqual({ object: 'list', data: [{ id: 'a' }], first_id: 'a', last_id: 'a', has_more: false });
    expect(itemPage(items, 3, 'asc', null)).toMatchObject({ has_more: false, first_id: 'a', last_id: 'c' });
    expect(itemPage(items, 2, 'asc', 'nope')).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    expect(itemPage([], 20, 'desc', null)).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });
});
