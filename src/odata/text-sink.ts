/**
 * Where the writers put text. A streamed feed passes a sink that encodes each piece into the
 * response's buffers as it comes; single documents collect the pieces into one string.
 */
export interface TextSink {
  append(text: string): void;
  /**
   * Text that holds characters outside ASCII (a value's JSON or XML text), given apart from the
   * text around it by a sink that encodes as it goes. Node 20 turns a string into UTF-8 on a
   * fast path only while all of it is ASCII: one umlaut in a title sent the whole entity around
   * it down the slow path, which measured about twice the cost for the same bytes.
   * A sink without it takes such text through append().
   */
  appendApart?(text: string): void;
}

export class StringSink implements TextSink {
  text = '';
  append(text: string): void {
    this.text += text;
  }
}

/**
 * A single document as UTF-8 bytes, for a response body. The ASCII text is joined as it comes
 * and the text outside ASCII kept apart, and each piece is encoded once into one buffer: a GET
 * by key's Atom entry of about 4 KB, encoded whole because of one umlaut in its title, spent
 * nearly a fifth of the request's CPU in Buffer.from.
 */
export class BytesSink implements TextSink {
  private readonly pieces: string[] = [];
  private pending = '';

  append(text: string): void {
    this.pending += text;
  }

  appendApart(text: string): void {
    if (this.pending !== '') this.pieces.push(this.pending);
    this.pieces.push(text);
    this.pending = '';
  }

  bytes(): Buffer {
    if (this.pending !== '') this.pieces.push(this.pending);
    this.pending = '';
    let length = 0;
    for (const piece of this.pieces) length += Buffer.byteLength(piece, 'utf8');
    const out = Buffer.allocUnsafe(length);
    let at = 0;
    for (const piece of this.pieces) at += out.write(piece, at, 'utf8');
    return out;
  }
}

/** Any character outside ASCII: text the writers hand to appendApart(). */
export const NON_ASCII = /[^\x00-\x7f]/;
