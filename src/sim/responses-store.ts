/**
 * The simulator's store of Responses (issue 31 item 3: passthrough models keep the vendor's own store):
 * a Response created with `store` (default true) is kept, as OpenAI keeps it, and answered by
 * `GET /v1/responses/{id}`, `DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items`;
 * an unknown id is OpenAI's 404. Bounded: the oldest goes past 1,000.
 */
import type { SimMatch } from './azure-content-safety.js';
import type { SimRoute } from './exchange.js';
import { openaiError, openaiFaultResponse } from './openai-route.js';

type Rec = Record<string, unknown>;
const MAX_KEPT = 1000;

/** The input of a request as the Responses API lists its items. */
function inputItems(input: unknown, responseId: string): Rec[] {
  const list = typeof input === 'string' ? [{ type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }] : Array.isArray(input) ? (input as Rec[]) : [];
  return list.map((item, i) => ({ id: `msg_${responseId.slice(-12)}_${i}`, type: 'message', status: 'completed', ...item }));
}

/** One simulator's kept Responses and the routes that read them. */
export class SimResponseStore {
  private readonly kept = new Map<string, { response: Rec; items: Rec[] }>();

  /** Keeps a created Response (unless the request said `store: false`). */
  keep(request: Rec, response: Rec): void {
    if (request.store === false) return;
    const id = response.id as string;
    this.kept.set(id, { response, items: inputItems(request.input, id) });
    if (this.kept.size > MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
  }

  /** The route for a GET or DELETE under /v1/responses/{id}, or undefined. */
  readonly match = (method: string, url: URL): SimMatch | undefined => {
    const m = /^\/v1\/responses\/([^/]+)(\/input_items)?$/.exec(url.pathname);
    if (!m || (method !== 'GET' && method !== 'DELETE') || (m[2] && method !== 'GET')) return undefined;
    const id = decodeURIComponent(m[1]!);
    const route: SimRoute = {
      faultResponse: openaiFaultResponse,
      handle: async (x) => {
        const entry = this.kept.get(id);
        if (!entry) return x.sendJson(404, openaiError(`Response with id '${id}' not found.`, 'invalid_request_error', null, null));
        if (method === 'DELETE') {
          this.kept.delete(id);
          return x.sendJson(200, { id, object: 'response', deleted: true });
        }
        if (!m[2]) return x.sendJson(200, entry.response);
        const data = [...entry.items].reverse();
        x.sendJson(200, { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false });
      },
    };
    return { route, faultKey: 'responses-store' };
  };
}
