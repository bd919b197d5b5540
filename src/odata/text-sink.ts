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

/** Any character outside ASCII: text the writers hand to appendApart(). */
export const NON_ASCII = /[^\x00-\x7f]/;
