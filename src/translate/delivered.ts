/**
 * The text a stream translator has delivered to the client (content, tool names and arguments), kept
 * in pieces with a running length: the length is read on every written piece of a stream on a credit
 * grant (issue 30: delivered content since the last checkpoint is bounded), the whole text only when
 * a checkpoint or the bill counts it.
 */
export class DeliveredText {
  private readonly parts: string[] = [];
  /** Characters (UTF-16 code units) delivered so far. */
  length = 0;

  /** Appends pieces, in order. */
  push(...pieces: string[]): void {
    for (const piece of pieces) {
      this.parts.push(piece);
      this.length += piece.length;
    }
  }

  /** The whole text. */
  text(): string {
    return this.parts.join('');
  }
}
