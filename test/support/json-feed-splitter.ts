/**
 * Splits a JSON verbose V1 feed (`{"d":[{…},{…}]}`) into its entries as the text arrives, so a
 * test can check a response of hundreds of megabytes entry by entry without holding it whole.
 * Tracks nesting outside strings only; each complete entry is handed over as text.
 */
export class JsonFeedSplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private entry = '';
  private entryStart = -1;
  /** Characters seen, for the caller's figures. */
  characters = 0;

  constructor(private readonly onEntry: (text: string) => void) {}

  push(chunk: string): void {
    this.characters += chunk.length;
    this.entryStart = this.depth >= 3 ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 92 /* \ */) this.escaped = true;
        else if (c === 34 /* " */) this.inString = false;
        continue;
      }
      if (c === 34) this.inString = true;
      else if (c === 123 /* { */ || c === 91 /* [ */) {
        // Depth 1 is {"d":…}, 2 the array, 3 an entry.
        if (++this.depth === 3) this.entryStart = i;
      } else if (c === 125 /* } */ || c === 93 /* ] */) {
        if (this.depth-- === 3) {
          this.onEntry(this.entry + chunk.slice(this.entryStart, i + 1));
          this.entry = '';
          this.entryStart = -1;
        }
      }
    }
    if (this.entryStart >= 0) this.entry += chunk.slice(this.entryStart);
  }

  /** True when the document closed exactly. */
  get complete(): boolean {
    return this.depth === 0 && !this.inString;
  }
}
