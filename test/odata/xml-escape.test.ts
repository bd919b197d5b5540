/**
 * xmlText answers plain text after one scan; whatever that scan lets through unchanged must be
 * exactly what the full escape would have written, and everything else must take the full escape.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeXml, xmlText } from '../../src/odata/xml-escape';

/** The full escape, written out: the five entities, CR as &#xD;, unsafe characters as U+FFFD. */
function reference(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    const ch = s[i]!;
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += ch + s[i + 1]!;
        i++;
      } else out += '\uFFFD';
      continue;
    }
    if (c >= 0xdc00 && c <= 0xdfff) out += '\uFFFD';
    else if (ch === '\r') out += '&#xD;';
    else if ((c < 0x20 && c !== 0x09 && c !== 0x0a) || c === 0xfffe || c === 0xffff) out += '\uFFFD';
    else out += escapeXml(ch);
  }
  return out;
}

test('xmlText matches the full escape for plain, special, unsafe and surrogate text', () => {
  const samples = [
    '',
    'Bench Produkt 12 Größe M',
    '<p>Ein Produkt für den Benchmark, mit <b>Auszeichnung</b>.</p>',
    `Tom & Jerry's "quote"`,
    'line\r\nbreak',
    'tab\tand\nnewline',
    'bell\u0007 and unit separator\u001f',
    'emoji 😀 pair',
    'lone high \uD83D here',
    'lone low \uDE00 here',
    'reversed \uDE00\uD83D pair',
    'non-characters \uFFFE\uFFFF',
    'ends with high \uD83D',
  ];
  for (const s of samples) assert.equal(xmlText(s), reference(s), JSON.stringify(s));
});

test('text that needs nothing is answered as the same string', () => {
  const s = 'Merino Shirt Navy, Größe L – 39,00 €';
  assert.equal(xmlText(s), s);
});
