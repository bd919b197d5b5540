/**
 * Values that one engine could store and the other could not are refused on both, with a 400
 * naming the property, so that a catalogue means the same on SQLite and on PostgreSQL: a String
 * with U+0000 (PostgreSQL text cannot hold it). Text that both hold, however unusual (astral
 * characters, combining marks, the largest code point), round-trips exactly on each.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';

let live: LiveService;
let seller: Seller;
before(async () => {
  live = await startLive();
  seller = await newSeller(live, 'values');
});
after(() => live.close());

const json = { 'Content-Type': 'application/json', Accept: 'application/json' };

test('a String with U+0000 is a 400 naming the property, on create and on update, in JSON and Atom; nothing is stored', async () => {
  const created = await asSeller(seller, `${live.root}/Products`, { method: 'POST', headers: json, body: JSON.stringify({ Title: 'a\u0000b', Price: '1', StockAmount: 1 }) });
  assert.equal(created.status, 400, created.body);
  assert.match(created.body, /'Title' must not contain the character U\+0000/);
  const atom =
    `<entry xmlns="http://www.w3.org/2005/Atom" xmlns:d="http://schemas.microsoft.com/ado/2007/08/dataservices" xmlns:m="http://schemas.microsoft.com/ado/2007/08/dataservices/metadata">` +
    `<content type="application/xml"><m:properties><d:Title>t</d:Title><d:Description>x&#0;y</d:Description><d:Price>1</d:Price><d:StockAmount>1</d:StockAmount></m:properties></content></entry>`;
  const atomCreated = await asSeller(seller, `${live.root}/Products`, { method: 'POST', headers: { 'Content-Type': 'application/atom+xml' }, body: atom });
  assert.equal(atomCreated.status, 400, atomCreated.body);
  const count = await asSeller(seller, `${live.root}/Products/$count`);
  assert.equal(count.body, '0');
  const ok = await asSeller(seller, `${live.root}/Products`, { method: 'POST', headers: json, body: JSON.stringify({ Title: 'fine', Price: '1', StockAmount: 1 }) });
  assert.equal(ok.status, 201);
  const id = (JSON.parse(ok.body) as { d: { Id: string } }).d.Id;
  const merged = await asSeller(seller, `${live.root}/Products(${id}L)`, { method: 'MERGE', headers: json, body: JSON.stringify({ Description: 'x\u0000' }) });
  assert.equal(merged.status, 400, merged.body);
  assert.match(merged.body, /'Description' must not contain the character U\+0000/);
});

test('unusual text that both engines hold round-trips exactly', async () => {
  const title = 'A😀\u{10FFFF}e\u0301 Ω \t\u00a0\u2028 ✓';
  const created = await asSeller(seller, `${live.root}/Products`, { method: 'POST', headers: json, body: JSON.stringify({ Title: title, Price: '1', StockAmount: 1 }) });
  assert.equal(created.status, 201, created.body);
  const id = (JSON.parse(created.body) as { d: { Id: string } }).d.Id;
  const read = await asSeller(seller, `${live.root}/Products(${id}L)`, { headers: { Accept: 'application/json' } });
  assert.equal((JSON.parse(read.body) as { d: { Title: string } }).d.Title, title);
});
