/**
 * xmlBodyText: XML request bodies decoded by the encoding they name (BOM, then the Content-Type
 * charset, then the XML declaration, then UTF-8), from real bytes written out by hand; an
 * encoding the service does not know is a 415 naming it, bytes invalid in the named one a 400.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { xmlBodyText } from '../../src/odata/xml-body-text';
import { readAtomEntry, readXmlLink } from '../../src/odata/atom/reader';
import { ODataError } from '../../src/odata/errors';
import { model } from '../../src/model/catalogue-model';

const declaration = (encoding: string) => Buffer.from(`<?xml version="1.0" encoding="${encoding}"?>`, 'ascii');
const a = (text: string) => Buffer.from(text, 'ascii');
/** "Größe 9,90 €" in windows-1252: ö F6, ß DF, € 80. */
const GROESSE_1252 = Buffer.from([0x47, 0x72, 0xf6, 0xdf, 0x65, 0x20, 0x39, 0x2c, 0x39, 0x30, 0x20, 0x80]);
/** "Привет" in KOI8-R. */
const PRIVET_KOI8R = Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4]);

function rejects(status: number, run: () => unknown, message: RegExp): void {
  assert.throws(run, (e: unknown) => e instanceof ODataError && e.status === status && message.test(e.message));
}

test('the XML declaration names the encoding: windows-1252, ISO-8859-1 (in any case of its name), KOI8-R', () => {
  for (const name of ['windows-1252', 'Windows-1252', 'cp1252']) {
    const body = Buffer.concat([declaration(name), a('<a>'), GROESSE_1252, a('</a>')]);
    assert.equal(xmlBodyText(body, undefined), `<?xml version="1.0" encoding="${name}"?><a>Größe 9,90 €</a>`, name);
  }
  // ISO-8859-1 is read as defined: 0x80 is the control character U+0080 there, not €.
  for (const name of ['iso-8859-1', 'ISO-8859-1', 'ISO_8859-1', 'latin1']) {
    const body = Buffer.concat([declaration(name), a('<a>'), GROESSE_1252, a('</a>')]);
    assert.equal(xmlBodyText(body, undefined), `<?xml version="1.0" encoding="${name}"?><a>Größe 9,90 \u0080</a>`, name);
  }
  const single = Buffer.concat([a(`<?xml version='1.0' encoding='koi8-r' standalone='yes'?>\n<a>`), PRIVET_KOI8R, a('</a>')]);
  assert.equal(xmlBodyText(single, undefined), `<?xml version='1.0' encoding='koi8-r' standalone='yes'?>\n<a>Привет</a>`);
});

test('the Content-Type charset comes before the declaration; a BOM before both', () => {
  const utf8Body = Buffer.concat([declaration('windows-1252'), Buffer.from('<a>Größe €</a>', 'utf8')]);
  assert.equal(xmlBodyText(utf8Body, 'utf-8'), '<?xml version="1.0" encoding="windows-1252"?><a>Größe €</a>');
  const bare1252 = Buffer.concat([a('<a>'), GROESSE_1252, a('</a>')]);
  assert.equal(xmlBodyText(bare1252, 'windows-1252'), '<a>Größe 9,90 €</a>');
  assert.equal(xmlBodyText(bare1252, ' CP1252 '), '<a>Größe 9,90 €</a>');

  const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<a>Größe</a>', 'utf8')]);
  assert.equal(xmlBodyText(withBom, 'iso-8859-1'), '<a>Größe</a>', 'the UTF-8 BOM wins and is dropped');
  const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<?xml version="1.0" encoding="utf-16"?><a>Größe €</a>', 'utf16le')]);
  assert.equal(xmlBodyText(utf16le, undefined), '<?xml version="1.0" encoding="utf-16"?><a>Größe €</a>');
  const utf16be = Buffer.from(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<a>€</a>', 'utf16le')])).swap16();
  assert.equal(xmlBodyText(utf16be, undefined), '<a>€</a>');
});

test('without BOM, charset or declaration the body is UTF-8; invalid bytes in the named encoding are a 400', () => {
  assert.equal(xmlBodyText(Buffer.from('<a>Größe €</a>', 'utf8'), undefined), '<a>Größe €</a>');
  assert.equal(xmlBodyText(Buffer.concat([a('<?xml version="1.0"?><a>'), Buffer.from('€', 'utf8'), a('</a>')]), undefined), '<?xml version="1.0"?><a>€</a>');
  rejects(400, () => xmlBodyText(Buffer.concat([a('<a>'), GROESSE_1252, a('</a>')]), undefined), /^The request body is not valid UTF-8\.$/);
  rejects(400, () => xmlBodyText(Buffer.concat([declaration('windows-1252'), a('<a>'), Buffer.from([0x81]), a('</a>')]), undefined), /^The request body is not valid windows-1252\.$/);
  rejects(400, () => xmlBodyText(Buffer.from([0xff, 0xfe, 0x3c, 0x00, 0x00, 0xd8, 0x3e, 0x00]), undefined), /^The request body is not valid UTF-16LE\.$/);
  rejects(400, () => xmlBodyText(Buffer.from([0x3c, 0x61, 0x3e, 0x82, 0xff, 0x3c]), 'shift_jis'), /^The request body is not valid shift_jis\.$/);
});

test('an encoding the service does not know is a 415 that names it', () => {
  const body = Buffer.concat([declaration('x-klingon-8'), a('<a/>')]);
  rejects(415, () => xmlBodyText(body, undefined), /encoding 'x-klingon-8' is not supported/);
  rejects(415, () => xmlBodyText(a('<a/>'), 'ebcdic-de'), /encoding 'ebcdic-de' is not supported/);
  // Names of byte transforms and UTF-7 are no document encodings; nor is an Object key.
  for (const label of ['base64', 'hex', 'utf-7', 'UTF7', 'constructor', '__proto__', '']) {
    rejects(415, () => xmlBodyText(a('<a/>'), label), new RegExp(`encoding '${label}' is not supported`));
  }
  // The echo is bounded and free of control characters.
  rejects(415, () => xmlBodyText(a('<a/>'), `x${'\u0007'.repeat(500)}`), /^The request body's encoding 'x\uFFFD{59}…' is not supported/);
});

test('the Atom reader and the $links reader decode by the declaration and the charset', () => {
  const Catalog = model.typeByName.get('Catalog')!;
  const entry = Buffer.concat([
    declaration('windows-1252'),
    a('<entry xmlns="http://www.w3.org/2005/Atom" xmlns:d="http://schemas.microsoft.com/ado/2007/08/dataservices" xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata"><content type="application/xml"><m:properties><d:Name>'),
    GROESSE_1252,
    a('</d:Name></m:properties></content></entry>'),
  ]);
  assert.equal(readAtomEntry(Catalog, entry).values.get('Name'), 'Größe 9,90 €');
  rejects(415, () => readAtomEntry(Catalog, entry, 'x-unknown'), /'x-unknown'/);
  const link = Buffer.concat([a('<uri xmlns="http://schemas.microsoft.com/ado/2007/08/dataservices">http://h/Catalogs(5L)?x='), Buffer.from([0xe4]), a('</uri>')]);
  assert.equal(readXmlLink(link, 'iso-8859-1'), 'http://h/Catalogs(5L)?x=ä');
  assert.equal(readXmlLink(link, 'windows-1252'), 'http://h/Catalogs(5L)?x=ä');
});
