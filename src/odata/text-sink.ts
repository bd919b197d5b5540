/**
 * Where the writers put text. A streamed feed passes a sink that encodes each piece into the
 * response's buffers as it comes; single documents collect the pieces into one string.
 */
export interface TextSink {
  append(text: string): void;
}

export class StringSink implements TextSink {
  text = '';
  append(text: string): void {
    this.text += text;
  }
}
