/**
 * Stage 1, auth: a `gw-` key from either header style, else 401 (spec 5). A key past its `expires_at`
 * (issue 33 item 2) is refused like an invalid one, by the gateway's clock on every request, so a
 * cached lookup never lets it live on.
 */
import { systemClock } from '../../clock.js';
import { GatewayError } from '../../errors.js';
import { presentedKey } from '../auth-cache.js';
import type { Stage } from '../stage.js';

/** Authenticates every route. */
export const authStage: Stage = {
  name: 'auth',
  compile: (_route, runtime) => async (ctx) => {
    const key = presentedKey(ctx.req.headers);
    if (!key) throw new GatewayError('invalid_api_key', 'Missing API key: send "Authorization: Bearer gw-..." or "x-api-key: gw-...".');
    const caller = key.startsWith('gw-') ? await runtime.auth.authenticate(key) : null;
    if (!caller) throw new GatewayError('invalid_api_key', 'Invalid API key.');
    const expiresAt = caller.controls?.expiresAt;
    if (expiresAt && expiresAt.getTime() <= (runtime.clock ?? systemClock).now().getTime()) throw new GatewayError('invalid_api_key', 'This API key has expired.');
    ctx.auth = caller;
  },
};
