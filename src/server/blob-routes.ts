/**
 * The local blob store's signed URLs (spec 4.7 rules 1 and 5), served by the gateway itself: the
 * write-only upload (`PUT`, raw bytes, counted and capped at the declared size) and the read-only
 * service read (`GET`). They carry no key: the signature is the grant. With the S3 store these are
 * never handed out (the bucket signs its own URLs). Errors in the gateway's JSON error shape.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { PassThrough, type Readable } from 'node:stream';
import { GatewayError, toGatewayError } from '../errors.js';
import { DEFAULT_CLIENT_FORMAT } from '../formats/index.js';
import type { FileServices } from '../files/index.js';
import { contentRange } from '../files/byte-range.js';
import { BLOB_PATH, UPLOAD_PATH } from '../files/temp-files.js';

async function sendError(reply: FastifyReply, error: unknown, log: (message: string, error?: unknown) => void): Promise<void> {
  const gatewayError = toGatewayError(error);
  if (gatewayError.status >= 500) log('blob route failed', error);
  if (reply.sent) return;
  await reply.code(gatewayError.status).header('content-type', 'application/json; charset=utf-8').send(DEFAULT_CLIENT_FORMAT.errorBody(gatewayError));
}

/** Registers the upload and read URLs in their own scope (any content type is taken as a raw stream). */
export function registerBlobRoutes(app: FastifyInstance, files: () => FileServices | undefined, log: (message: string, error?: unknown) => void): void {
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, payload, done) => done(null, payload));
    scope.put<{ Params: { id: string }; Querystring: Record<string, unknown> }>(`${UPLOAD_PATH}:id`, async (req, reply) => {
      try {
        const services = files();
        if (!services) throw new GatewayError('not_found', 'No such upload URL.');
        // No body at all (fastify gives undefined without a content type): an empty upload, refused by the type check.
        const body = req.body as Readable | undefined;
        if (!body) throw new GatewayError('invalid_request', 'Send the bytes with the Content-Type the authorization returned.');
        // The store reads a pass-through, not the socket: refusing an upload past its size ends that
        // stream, and the 413 still reaches the client before the connection closes.
        const counted = new PassThrough();
        body.pipe(counted);
        await services.temp.receiveUpload(req.params.id, req.query, req.headers['content-type'], counted, Number(req.headers['content-length'] ?? NaN));
        await reply.code(200).send({ status: 'uploaded' });
      } catch (error) {
        // The client may still be sending: close the connection after answering so unread bytes are not parsed as a request.
        reply.header('connection', 'close');
        await sendError(reply, error, log);
      }
    });
    // An upload URL is write-only and a read URL read-only: any other method is refused outright.
    const wrongMethod = async (_req: unknown, reply: FastifyReply): Promise<void> =>
      sendError(reply.header('allow', 'PUT, GET'), new GatewayError('invalid_request', 'This signed URL does not allow this method.', { status: 405 }), log);
    scope.route({ method: ['GET', 'POST', 'DELETE', 'PATCH'], url: `${UPLOAD_PATH}:id`, handler: wrongMethod });
    scope.route({ method: ['PUT', 'POST', 'DELETE', 'PATCH'], url: `${BLOB_PATH}:id`, handler: wrongMethod });
    scope.get<{ Params: { id: string }; Querystring: Record<string, unknown> }>(`${BLOB_PATH}:id`, async (req, reply) => {
      try {
        const services = files();
        if (!services) throw new GatewayError('not_found', 'No such file URL.');
        const served = await services.temp.serveRead(req.params.id, req.query, req.headers.range);
        reply.header('accept-ranges', 'bytes').header('cache-control', 'private, no-store');
        if (!served.body) {
          // RFC 9110 15.5.17: a range past the end is 416 with the file's size.
          await reply.code(416).header('content-range', `bytes */${served.size}`).send();
          return;
        }
        const length = served.range ? served.range.end - served.range.start + 1 : served.size;
        if (served.range) reply.code(206).header('content-range', contentRange(served.range, served.size));
        await reply.header('content-type', served.record.contentType).header('content-length', String(length)).send(served.body);
      } catch (error) {
        await sendError(reply, error, log);
      }
    });
  });
}
