/**
 * A raw upstream request body (issue 9 point 3: "an operation declares its upstream request (JSON,
 * multipart, raw)"): bytes sent as they are, with their own Content-Type, e.g. an image posted as
 * `application/octet-stream` to a vision vendor. A translator's request() returns one for operations
 * declaring `request: raw` (src/upstream/client.ts refuses it for any other).
 */
export class RawBody {
  /** `data` is sent unchanged; `contentType` becomes the request's Content-Type. */
  constructor(readonly data: Buffer, readonly contentType: string) {}
}
