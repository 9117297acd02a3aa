/** The SSRF-safe fetcher for public URLs given as inputs (issue 11 item 7): its public surface. */
export { fetchPublicUrl, systemResolver, MAX_REDIRECTS, DEFAULT_TIMEOUT_MS, FETCH_HEADERS } from './fetch.js';
export type { FetchPublicUrlOptions, FetchedUrl, Resolver } from './fetch.js';
export { isRefusedAddress, refusedAddressReason, canonicalAddress } from './addresses.js';
export { parseUrlInput, allowHostKey, allowHostSet, urlInputError, MAX_URL_LENGTH } from './url.js';
export type { UrlTarget } from './url.js';
