/** A manifest that cannot be used: names the file, the JSON path inside it and the reason. */
export class ManifestError extends Error {
  constructor(
    readonly file: string,
    readonly path: string,
    readonly reason: string,
    readonly line?: number,
  ) {
    super(`${file}${line ? `:${line}` : ''}: ${path || '/'}: ${reason}`);
    this.name = 'ManifestError';
  }
}
