/**
 * GET /api/public/catalog (spec 4.17): unauthenticated; every enabled offering with its service
 * type, availability, token limits (context window, output cap), aliases and customer prices as
 * decimal USD strings for `per` units of `unit` (or per priced variant).
 */
import type { CompiledGateway, CompiledOffering } from '../config/types.js';

function entry(o: CompiledOffering): Record<string, unknown> {
  return {
    id: o.id,
    display_name: o.displayName ?? o.id,
    // The other ids it answers to, priced and billed as this offering (issue 31 item 4).
    ...(o.aliases?.length ? { aliases: [...o.aliases] } : {}),
    provider: o.providerId,
    service_type: o.serviceType,
    availability: o.availability,
    // For agentic clients (spec 4.2 rule 3): served natively by the responses API, or chat-only.
    ...(o.serviceType === 'CHAT' || o.serviceType === 'CODE' ? { native_responses: o.nativeResponses } : {}),
    // Token limits, so a client can size prompts and its output cap (a larger cap is a 400).
    ...(o.billing.unit === 'token' ? { context_window: o.contextWindow, max_output_tokens: o.maxOutputTokens } : {}),
    // Token prices are USD per `per` tokens; tool prices (e.g. web_search) sit beside them, USD per call.
    billing: { unit: o.billing.unit, per: Number(o.billing.per), prices: { ...o.billing.priceText, ...o.billing.toolText }, ...variantsOf(o) },
  };
}

/**
 * Priced variants (issue 31 item 8): each variant's request values and its price, USD per `per` units,
 * in the order they are matched (the first that matches prices a request); `prices` is then empty.
 */
function variantsOf(o: CompiledOffering): Record<string, unknown> {
  const variants = o.billing.variants ?? [];
  if (variants.length === 0) return {};
  return { variants: variants.map((v) => ({ when: { ...v.when }, price: v.priceText })) };
}

/** The public catalogue body. */
export function catalogBody(gateway: CompiledGateway): Record<string, unknown> {
  return { object: 'list', data: [...gateway.offerings.values()].filter((o) => o.enabled).map(entry) };
}
