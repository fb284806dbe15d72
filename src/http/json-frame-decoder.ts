/**
 * Splits a stream of back-to-back JSON objects (`{…}{…}{}`) into the objects' texts, the way
 * Nomad frames every streamed endpoint (logs, fs stream, monitor, the event stream): its encoder
 * writes one value after another with nothing between them. Whitespace between objects (older
 * Caravan agents wrote a newline after each) is skipped. The scanner follows strings and
 * escapes, so a brace inside a string never ends an object. No imports: the web UI uses it too.
 */
export class JsonFrameDecoder {
  private buf = '';
  /** Where the scan of the current object stopped, and its state there. */
  private pos = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;

  /** Feeds a chunk; returns the texts of the objects it completed, in order. */
  push(chunk: string): string[] {
    this.buf += chunk;
    const out: string[] = [];
    for (; this.pos < this.buf.length; this.pos++) {
      const c = this.buf[this.pos];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === '\\') this.escaped = true;
        else if (c === '"') this.inString = false;
        continue;
      }
      if (c === '"') this.inString = true;
      else if (c === '{' || c === '[') this.depth++;
      else if (c === '}' || c === ']') {
        this.depth--;
        if (this.depth === 0) {
          out.push(this.buf.slice(0, this.pos + 1).trim());
          this.buf = this.buf.slice(this.pos + 1);
          this.pos = -1;
        }
      } else if (this.depth === 0 && !/\s/.test(c!)) {
        throw new SyntaxError(`unexpected ${JSON.stringify(c)} between JSON frames`);
      }
    }
    return out;
  }

  /** Feeds a chunk and parses each completed object. */
  pushParsed<T>(chunk: string): T[] {
    return this.push(chunk).map((text) => JSON.parse(text) as T);
  }

  /** Text of an object begun but not finished (empty when the stream ended cleanly). */
  get pending(): string {
    return this.buf.trim();
  }
}
