/**
 * GET /v1/skills (spec 4.6): the built-in skills of the providers that run skills, answered by the
 * gateway from their manifests. `source=` filters by the vendor's built-in source value; customer
 * skills are never listed. Discovery does not imply every model supports every skill (the catalogue
 * and a refused execution say which do). Free.
 */
import type { RequestContext } from '../context.js';
import { intQuery } from './query.js';

/** One skill in the list shape (the vendor's Skill fields, both its beta and current names). */
function skillJson(source: string, s: { id: string; displayTitle: string; latestVersion: string; createdAt: string }): Record<string, unknown> {
  return {
    id: s.id, type: 'skill', source, display_title: s.displayTitle, display_name: s.displayTitle,
    latest_version: s.latestVersion, latest_version_id: s.latestVersion, created_at: s.createdAt, updated_at: s.createdAt,
  };
}

/** GET /v1/skills?source=&limit= */
export async function listSkills(ctx: RequestContext): Promise<void> {
  const query = ctx.req.query as Record<string, unknown>;
  const source = typeof query.source === 'string' ? query.source : null;
  const limit = intQuery(ctx, 'limit', 1, 100, 20);
  const data: Record<string, unknown>[] = [];
  for (const provider of ctx.gateway.providers.values()) {
    if (!provider.skills || (source !== null && source !== provider.skills.source)) continue;
    for (const skill of provider.skills.list) data.push(skillJson(provider.skills.source, skill));
  }
  ctx.started = true;
  await ctx.reply.send({ data: data.slice(0, limit), has_more: data.length > limit, next_page: null });
}
