/** The error of a credential that could not be exchanged for an access token (issue 32 item 3). */
import { GatewayError } from '../errors.js';

/**
 * A credential that could not be exchanged for a token (the token endpoint failed or refused, the
 * key file is unusable): the client's 502 when it ends the request; on an operation's send, a failed
 * attempt of that deployment, so another deployment may serve the request (src/upstream/client.ts).
 */
export class TokenUnavailable extends GatewayError {
  constructor(
    message: string,
    /**
     * Worth asking again later: the endpoint was unreachable or answered a rate limit or its own
     * failure. False when only the operator can mend it (a refused grant, an unusable key file).
     */
    readonly transient: boolean,
  ) {
    super('upstream_error', message);
  }
}
