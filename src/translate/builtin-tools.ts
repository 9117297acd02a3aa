/** Built-in responses tools the gateway never serves (spec 4.3 rule 3), on any offering. */
import { GatewayError } from '../errors.js';

const NOT_AVAILABLE = new Set(['code_interpreter', 'image_generation', 'file_search']);

/** Throws `tool_not_available` when the request enables one of them. */
export function refuseUnavailableTools(tools: unknown): void {
  if (!Array.isArray(tools)) return;
  for (const tool of tools as Array<{ type?: unknown }>) {
    if (typeof tool?.type === 'string' && NOT_AVAILABLE.has(tool.type)) {
      throw new GatewayError('tool_not_available', `The ${tool.type} tool is not available through this gateway.`, { param: 'tools' });
    }
  }
}
