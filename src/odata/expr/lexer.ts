/**
 * Splits the text of a $filter or $orderby expression (or one URI literal) into tokens, one at a
 * time, on demand: the parser asks for the next token only after it has dealt with the previous
 * one, so a syntax error is reported at the first place it occurs, whatever follows.
 *
 * The lexer knows no keywords: `and`, `not`, `null`, `asc` are names whose meaning depends on
 * where the parser meets them. It does know the shapes of literals (docs/protocol.md, "Literals"):
 * numbers with an optional sign, exponent and type suffix, quoted strings with '' for a quote, and
 * prefixed quoted literals such as datetime'…' and guid'…'.
 */
import { badRequest, type ODataError } from '../errors';
import { show } from './show';

export type Token =
  /** An identifier: a property, navigation, function, operator keyword, null/true/false. */
  | { readonly kind: 'name'; readonly pos: number; readonly text: string }
  /** A numeric literal as written, sign and suffix included: -5, 42L, 12.5M, 1E+10, 2.0f. */
  | { readonly kind: 'number'; readonly pos: number; readonly text: string }
  /** A string literal; `value` is its content with '' read as one quote. */
  | { readonly kind: 'string'; readonly pos: number; readonly value: string }
  /** A prefixed quoted literal: datetime'…', guid'…', X'…'; `value` is the quoted part. */
  | { readonly kind: 'quoted'; readonly pos: number; readonly prefix: string; readonly value: string }
  | { readonly kind: 'open' | 'close' | 'comma' | 'slash' | 'minus' | 'end'; readonly pos: number };

const WHITESPACE = new Set([' ', '\t', '\n', '\r', '\f', '\v']);

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isNameStart = (c: string | undefined): boolean =>
  c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
const isNamePart = (c: string | undefined): boolean => isNameStart(c) || isDigit(c);

const PUNCTUATION: ReadonlyMap<string, 'open' | 'close' | 'comma' | 'slash'> = new Map([
  ['(', 'open'],
  [')', 'close'],
  [',', 'comma'],
  ['/', 'slash'],
]);

export class Lexer {
  private index = 0;
  private lookahead: Token | undefined;

  /** `where` names the text in messages: "$filter", "$orderby", "the URI literal". */
  constructor(
    readonly text: string,
    readonly where: string,
  ) {}

  peek(): Token {
    if (this.lookahead === undefined) this.lookahead = this.scan();
    return this.lookahead;
  }

  next(): Token {
    const token = this.peek();
    this.lookahead = undefined;
    return token;
  }

  syntaxError(pos: number, detail: string): ODataError {
    return badRequest(`Syntax error at position ${pos} in ${this.where}: ${detail}`);
  }

  private scan(): Token {
    const text = this.text;
    while (this.index < text.length && WHITESPACE.has(text.charAt(this.index))) this.index++;
    const pos = this.index;
    if (pos >= text.length) return { kind: 'end', pos };
    const c = text.charAt(pos);

    const punctuation = PUNCTUATION.get(c);
    if (punctuation !== undefined) {
      this.index++;
      return { kind: punctuation, pos };
    }
    if (c === "'") return { kind: 'string', pos, value: this.quoted(pos) };
    // A minus sign directly before a digit belongs to the number; otherwise it negates
    // (binary subtraction is the keyword `sub`, so there is no ambiguity).
    if (isDigit(c) || (c === '-' && isDigit(text.charAt(pos + 1)))) return this.number(pos);
    if (c === '-') {
      this.index++;
      return { kind: 'minus', pos };
    }
    if (isNameStart(c)) {
      let end = pos + 1;
      while (end < text.length && isNamePart(text.charAt(end))) end++;
      const name = text.slice(pos, end);
      this.index = end;
      if (text.charAt(end) === "'") return { kind: 'quoted', pos, prefix: name, value: this.quoted(end) };
      return { kind: 'name', pos, text: name };
    }
    const codePoint = String.fromCodePoint(text.codePointAt(pos) ?? 0xfffd);
    throw this.syntaxError(pos, `the character '${show(codePoint)}' is not allowed here.`);
  }

  /** The content of a quoted literal whose opening quote is at `open`; '' stands for one quote. */
  private quoted(open: number): string {
    const text = this.text;
    const parts: string[] = [];
    let from = open + 1;
    for (;;) {
      const close = text.indexOf("'", from);
      if (close < 0) throw this.syntaxError(open, 'the quoted literal that starts here has no closing quote (\').');
      parts.push(text.slice(from, close));
      if (text.charAt(close + 1) !== "'") {
        this.index = close + 1;
        return parts.join('');
      }
      parts.push("'");
      from = close + 2;
    }
  }

  /** -?digits[.digits][(e|E)[+-]digits][suffix], not followed by a name character. */
  private number(pos: number): Token {
    const text = this.text;
    let end = pos;
    if (text.charAt(end) === '-') end++;
    while (isDigit(text.charAt(end))) end++;
    if (text.charAt(end) === '.' && isDigit(text.charAt(end + 1))) {
      end++;
      while (isDigit(text.charAt(end))) end++;
    }
    const e = text.charAt(end);
    if (e === 'e' || e === 'E') {
      const sign = text.charAt(end + 1);
      const digitsFrom = sign === '+' || sign === '-' ? end + 2 : end + 1;
      if (isDigit(text.charAt(digitsFrom))) {
        end = digitsFrom;
        while (isDigit(text.charAt(end))) end++;
      }
    }
    const suffix = text.charAt(end);
    if (suffix !== '' && 'LlMmDdFf'.includes(suffix) && !isNamePart(text.charAt(end + 1))) end++;
    if (isNamePart(text.charAt(end)) || text.charAt(end) === '.') {
      let junk = end;
      while (junk < text.length && (isNamePart(text.charAt(junk)) || text.charAt(junk) === '.')) junk++;
      throw this.syntaxError(pos, `'${show(text.slice(pos, junk))}' is not a valid numeric literal.`);
    }
    this.index = end;
    return { kind: 'number', pos, text: text.slice(pos, end) };
  }
}

/** A token as named in a message: "'Title'", "')'", "the end of the text". */
export function describeToken(token: Token): string {
  switch (token.kind) {
    case 'name':
    case 'number':
      return `'${show(token.text)}'`;
    case 'string':
      return `the string literal '${show(token.value)}'`;
    case 'quoted':
      return `the literal ${show(token.prefix)}'${show(token.value)}'`;
    case 'open':
      return "'('";
    case 'close':
      return "')'";
    case 'comma':
      return "','";
    case 'slash':
      return "'/'";
    case 'minus':
      return "'-'";
    case 'end':
      return 'the end of the text';
  }
}
