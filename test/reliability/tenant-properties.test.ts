/**
 * Property-based command sequences (fast-check): two accounts A and B drive one live service with
 * generated sequences of up to 50 commands — create, merge and delete products and their
 * specifics, read by key, read collections with filters, navigations and expansions, and $batch
 * changesets — each command naming its own rows, the other account's rows or rows that exist
 * nowhere. A small in-memory model says what each account owns. After every command:
 *
 * - no answer to one account holds an id or a (tagged) value of the other;
 * - statuses and reads match the model exactly (a foreign row is absent, an own row is as written);
 * - a foreign id acts exactly as a missing one: the same status and, with the id normalised, the
 *   same answer body, for every kind of command;
 * - at the end of each run both accounts' whole catalogues match the model.
 *
 * Both accounts are emptied with DeleteAccountData (the real operation) before each run.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, type LiveService, type Seller } from '../support/live-service';
import { reportFigures } from '../support/figures';
import { byTier } from '../support/tier';
import { batchBody, changesetPart, httpPart, postBatch, readBatchAnswer } from '../batch/support';

type Who = 'a' | 'b';
const OTHER: Record<Who, Who> = { a: 'b', b: 'a' };
/** In every string an account writes, so a value of the other account is found by text search. */
const TAG: Record<Who, string> = { a: 'tagA9', b: 'tagB9' };
/** An id no row ever had. */
const MISSING = '860000000077';
const SPECIFIC_NAMES = ['Farbe', 'Marke', 'Größe'] as const;

// ---------------------------------------------------------------------------------------------
// The model

interface SpecificModel {
  readonly name: string;
  value: string;
}
interface ProductModel {
  title: string;
  stock: number;
  readonly specifics: Map<string, SpecificModel>;
}
type Account = Map<string, ProductModel>;
type World = Record<Who, Account>;

function cloneAccount(account: Account): Account {
  return new Map([...account].map(([id, p]) => [id, { title: p.title, stock: p.stock, specifics: new Map([...p.specifics].map(([sid, s]) => [sid, { ...s }])) }]));
}

function specificOwner(account: Account, specificId: string): ProductModel | undefined {
  for (const p of account.values()) if (p.specifics.has(specificId)) return p;
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Commands, as data (fast-check shrinks them)

/** Which row a command names: one of its own, one of the other account's, or one that never existed. */
interface Ref {
  readonly owner: 'own' | 'other' | 'missing';
  readonly pick: number;
}

type Command =
  | { readonly kind: 'createProduct'; readonly who: Who; readonly stock: number }
  | { readonly kind: 'mergeProduct'; readonly who: Who; readonly product: Ref; readonly stock: number }
  | { readonly kind: 'deleteProduct'; readonly who: Who; readonly product: Ref }
  | { readonly kind: 'createSpecific'; readonly who: Who; readonly product: Ref; readonly name: number }
  | { readonly kind: 'mergeSpecific'; readonly who: Who; readonly specific: Ref }
  | { readonly kind: 'deleteSpecific'; readonly who: Who; readonly specific: Ref }
  | { readonly kind: 'readProduct'; readonly who: Who; readonly product: Ref }
  | { readonly kind: 'readSpecific'; readonly who: Who; readonly specific: Ref }
  | { readonly kind: 'readCollection'; readonly who: Who; readonly query: 'all' | 'stock' | 'expand' | 'count' | 'inlinecount'; readonly stock: number }
  | { readonly kind: 'readChildren'; readonly who: Who; readonly product: Ref; readonly via: 'navigation' | 'filter' | 'count' }
  | { readonly kind: 'batch'; readonly who: Who; readonly operations: readonly BatchOperation[] };

type BatchOperation =
  | { readonly kind: 'createProduct'; readonly stock: number }
  | { readonly kind: 'mergeProduct'; readonly product: Ref; readonly stock: number }
  | { readonly kind: 'deleteProduct'; readonly product: Ref }
  | { readonly kind: 'createSpecific'; readonly product: Ref; readonly name: number }
  | { readonly kind: 'deleteSpecific'; readonly specific: Ref };

const who = fc.constantFrom<Who>('a', 'b');
const ref: fc.Arbitrary<Ref> = fc.record({ owner: fc.constantFrom<Ref['owner']>('own', 'own', 'other', 'missing'), pick: fc.nat(20) });
const stock = fc.nat(30);
const name = fc.nat(SPECIFIC_NAMES.length - 1);

const batchOperation: fc.Arbitrary<BatchOperation> = fc.oneof(
  fc.record({ kind: fc.constant('createProduct' as const), stock }),
  fc.record({ kind: fc.constant('mergeProduct' as const), product: ref, stock }),
  fc.record({ kind: fc.constant('deleteProduct' as const), product: ref }),
  fc.record({ kind: fc.constant('createSpecific' as const), product: ref, name }),
  fc.record({ kind: fc.constant('deleteSpecific' as const), specific: ref }),
);

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('createProduct' as const), who, stock }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('mergeProduct' as const), who, product: ref, stock }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteProduct' as const), who, product: ref }) },
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('createSpecific' as const), who, product: ref, name }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('mergeSpecific' as const), who, specific: ref }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('deleteSpecific' as const), who, specific: ref }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('readProduct' as const), who, product: ref }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('readSpecific' as const), who, specific: ref }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('readCollection' as const), who, query: fc.constantFrom('all', 'stock', 'expand', 'count', 'inlinecount'), stock }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('readChildren' as const), who, product: ref, via: fc.constantFrom('navigation', 'filter', 'count') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('batch' as const), who, operations: fc.array(batchOperation, { minLength: 1, maxLength: 4 }) }) },
);

// ---------------------------------------------------------------------------------------------
// The live service

let live: LiveService;
const sellers = {} as Record<Who, Seller>;
const figures = { runs: 0, commands: 0, batchOperations: 0, foreignOrMissingCommands: 0, violations: 0 };

before(async () => {
  live = await startLive();
  sellers.a = await newSeller(live, 'prop-a');
  sellers.b = await newSeller(live, 'prop-b');
});
after(() => live.close());

function call(w: Who, method: string, path: string, body?: unknown): Promise<HttpResponse> {
  const headers: Record<string, string> = { Accept: 'application/json', MaxDataServiceVersion: '2.0' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  return asSeller(sellers[w], live.root + path.replace(/ /g, '%20'), { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
}

// ---------------------------------------------------------------------------------------------
// One run

type Json = Record<string, unknown>;

class Run {
  readonly world: World = { a: new Map(), b: new Map() };
  /** Every id each account ever created (deleted ones too): none may reach the other account. */
  readonly everCreated: Record<Who, Set<string>> = { a: new Set(), b: new Set() };
  /** Per kind of command, the answer a foreign or missing id gets (id normalised). */
  readonly refusals = new Map<string, string>();
  private counter = 0;

  /** A product id the ref names, for `w`. */
  productId(w: Who, r: Ref): string {
    if (r.owner === 'missing') return MISSING;
    const ids = [...this.world[r.owner === 'own' ? w : OTHER[w]].keys()];
    return ids.length ? ids[r.pick % ids.length]! : MISSING;
  }

  specificId(w: Who, r: Ref): string {
    if (r.owner === 'missing') return MISSING;
    const ids = [...this.world[r.owner === 'own' ? w : OTHER[w]].values()].flatMap((p) => [...p.specifics.keys()]);
    return ids.length ? ids[r.pick % ids.length]! : MISSING;
  }

  title(w: Who): string {
    return `${TAG[w]} Produkt ${++this.counter}`;
  }

  value(w: Who): string {
    return `${TAG[w]} Wert ${++this.counter}`;
  }

  /** Fails when an answer to `w` holds one of the other account's ids or values. */
  noForeign(w: Who, label: string, body: string, exceptId?: string): void {
    const other = OTHER[w];
    check(!body.includes(TAG[other]), `${label}: the answer to ${w} holds a value of ${other}: ${body.slice(0, 300)}`);
    for (const m of body.matchAll(/"(?:Id|ProductId)":\s*"(\d+)"|\((\d+)L\)/g)) {
      const id = m[1] ?? m[2]!;
      if (id === exceptId) continue;
      check(!this.everCreated[other].has(id), `${label}: the answer to ${w} names ${other}'s row ${id}: ${body.slice(0, 300)}`);
    }
  }

  /** A foreign id must answer exactly like a missing one, for every kind of command. */
  refusal(kind: string, id: string, res: { status: number; body: string }): void {
    figures.foreignOrMissingCommands++;
    const shape = `${res.status} ${res.body.replace(new RegExp(`(?<!\\d)${id}(?!\\d)`, 'g'), '<id>')}`;
    const seen = this.refusals.get(kind);
    if (seen === undefined) this.refusals.set(kind, shape);
    else check(seen === shape, `${kind}: a foreign or missing id answered\n  ${shape.slice(0, 300)}\nwhere another answered\n  ${seen.slice(0, 300)}`);
  }

  async execute(c: Command): Promise<void> {
    figures.commands++;
    const w = c.who;
    const mine = this.world[w];
    switch (c.kind) {
      case 'createProduct': {
        const title = this.title(w);
        const res = await call(w, 'POST', '/Products', { Title: title, Price: '9.5', StockAmount: c.stock });
        expectStatus(res, 201, c);
        const id = String((JSON.parse(res.body) as { d: Json }).d.Id);
        this.everCreated[w].add(id);
        mine.set(id, { title, stock: c.stock, specifics: new Map() });
        this.noForeign(w, c.kind, res.body);
        return;
      }
      case 'mergeProduct': {
        const id = this.productId(w, c.product);
        const title = this.title(w);
        const res = await call(w, 'MERGE', `/Products(${id}L)`, { Title: title, StockAmount: c.stock });
        const p = mine.get(id);
        if (p) {
          expectStatus(res, 204, c);
          p.title = title;
          p.stock = c.stock;
        } else {
          expectStatus(res, 404, c);
          this.refusal(c.kind, id, res);
        }
        this.noForeign(w, c.kind, res.body, id);
        return;
      }
      case 'deleteProduct': {
        const id = this.productId(w, c.product);
        const res = await call(w, 'DELETE', `/Products(${id}L)`);
        if (mine.delete(id)) expectStatus(res, 204, c);
        else {
          expectStatus(res, 404, c);
          this.refusal(c.kind, id, res);
        }
        this.noForeign(w, c.kind, res.body, id);
        return;
      }
      case 'createSpecific': {
        const productId = this.productId(w, c.product);
        const value = this.value(w);
        const specificName = SPECIFIC_NAMES[c.name]!;
        const res = await call(w, 'POST', '/ProductSpecifics', { ProductId: productId, Name: specificName, Value: value });
        const p = mine.get(productId);
        if (!p) {
          expectStatus(res, 400, c);
          this.refusal(c.kind, productId, res);
        } else if ([...p.specifics.values()].some((s) => s.name === specificName)) {
          expectStatus(res, 409, c);
        } else {
          expectStatus(res, 201, c);
          const id = String((JSON.parse(res.body) as { d: Json }).d.Id);
          this.everCreated[w].add(id);
          p.specifics.set(id, { name: specificName, value });
        }
        this.noForeign(w, c.kind, res.body, productId);
        return;
      }
      case 'mergeSpecific': {
        const id = this.specificId(w, c.specific);
        const value = this.value(w);
        const res = await call(w, 'MERGE', `/ProductSpecifics(${id}L)`, { Value: value });
        const p = specificOwner(mine, id);
        if (p) {
          expectStatus(res, 204, c);
          p.specifics.get(id)!.value = value;
        } else {
          expectStatus(res, 404, c);
          this.refusal(c.kind, id, res);
        }
        this.noForeign(w, c.kind, res.body, id);
        return;
      }
      case 'deleteSpecific': {
        const id = this.specificId(w, c.specific);
        const res = await call(w, 'DELETE', `/ProductSpecifics(${id}L)`);
        const p = specificOwner(mine, id);
        if (p) {
          expectStatus(res, 204, c);
          p.specifics.delete(id);
        } else {
          expectStatus(res, 404, c);
          this.refusal(c.kind, id, res);
        }
        this.noForeign(w, c.kind, res.body, id);
        return;
      }
      case 'readProduct': {
        const id = this.productId(w, c.product);
        const res = await call(w, 'GET', `/Products(${id}L)?$expand=ProductSpecifics`);
        const p = mine.get(id);
        if (p) {
          expectStatus(res, 200, c);
          checkProduct(id, p, (JSON.parse(res.body) as { d: Json }).d);
        } else {
          expectStatus(res, 404, c);
          this.refusal(c.kind, id, res);
        }
        this.noForeign(w, c.kind, res.body, id);
        return;
      }
      case 'readSpecific': {
        const id = this.specificId(w, c.specific);
        const res = await call(w, 'GET', `/ProductSpecifics(${id}L)`);
        const p = specificOwner(mine, id);
        if (p) {
          expectStatus(res, 200, c);
          const d = (JSON.parse(res.body) as { d: Json }).d;
          check(d.Value === p.specifics.get(id)!.value, `ProductSpecifics(${id}) Value ${String(d.Value)}`);
        } else {
          expectStatus(res, 404, c);
          this.refusal(c.kind, id, res);
        }
        this.noForeign(w, c.kind, res.body, id);
        return;
      }
      case 'readCollection': {
        const path = {
          all: '/Products',
          stock: `/Products?$filter=StockAmount ge ${c.stock}`,
          expand: '/Products?$expand=ProductSpecifics',
          count: `/Products/$count?$filter=StockAmount ge ${c.stock}`,
          inlinecount: `/Products?$inlinecount=allpages&$filter=StockAmount lt ${c.stock}`,
        }[c.query];
        const res = await call(w, 'GET', path);
        expectStatus(res, 200, c);
        this.noForeign(w, c.kind, res.body);
        const expected = [...mine].filter(([, p]) => (c.query === 'stock' || c.query === 'count' ? p.stock >= c.stock : c.query === 'inlinecount' ? p.stock < c.stock : true));
        if (c.query === 'count') {
          check(res.body === String(expected.length), `${path}: ${res.body}, the model has ${expected.length}`);
          return;
        }
        const d = (JSON.parse(res.body) as { d: Json[] | { results: Json[]; __count?: string } }).d;
        const rows = Array.isArray(d) ? d : d.results;
        if (c.query === 'inlinecount') check(!Array.isArray(d) && d.__count === String(expected.length), `${path}: __count`);
        check(sameSet(rows.map((r) => String(r.Id)), expected.map(([id]) => id)), `${path}: ids ${rows.map((r) => r.Id).join(',')} but the model has ${expected.map(([id]) => id).join(',')}`);
        for (const row of rows) checkProduct(String(row.Id), mine.get(String(row.Id))!, row, c.query === 'expand');
        return;
      }
      case 'readChildren': {
        const productId = this.productId(w, c.product);
        const path = {
          navigation: `/Products(${productId}L)/ProductSpecifics`,
          filter: `/ProductSpecifics?$filter=ProductId eq ${productId}L`,
          count: `/Products(${productId}L)/ProductSpecifics/$count`,
        }[c.via];
        const res = await call(w, 'GET', path);
        const p = mine.get(productId);
        this.noForeign(w, c.kind, res.body, productId);
        if (!p && c.via !== 'filter') {
          expectStatus(res, 404, c);
          this.refusal(`${c.kind} ${c.via}`, productId, res);
          return;
        }
        expectStatus(res, 200, c);
        const expected = p ? [...p.specifics.keys()] : [];
        if (c.via === 'count') {
          check(res.body === String(expected.length), `${path}: ${res.body}`);
          return;
        }
        // A filter on a foreign or missing product is an empty feed, the same for both.
        if (!p) this.refusal(`${c.kind} ${c.via}`, productId, res);
        const d = (JSON.parse(res.body) as { d: Json[] | { results: Json[] } }).d;
        const rows = Array.isArray(d) ? d : d.results;
        check(sameSet(rows.map((r) => String(r.Id)), expected), `${path}: ${rows.map((r) => r.Id).join(',')} but the model has ${expected.join(',')}`);
        return;
      }
      case 'batch':
        await this.batch(c);
        return;
    }
  }

  /** A changeset of the operations, then a query part reading the account's products back. */
  private async batch(c: Extract<Command, { kind: 'batch' }>): Promise<void> {
    const w = c.who;
    const predicted = cloneAccount(this.world[w]);
    /** Products and specifics deleted earlier in this changeset: deleting them again answers 204. */
    const deletedHere = new Set<string>();
    let failure: { index: number; status: number; id?: string; kind: string } | undefined;
    const created: { index: number; kind: 'product' | 'specific'; productId?: string; name?: string; value?: string; title?: string; stock?: number }[] = [];
    const parts: string[] = [];
    c.operations.forEach((op, index) => {
      figures.batchOperations++;
      const part = (method: string, target: string, body?: unknown) =>
        httpPart({
          method,
          target,
          headers: ['Accept: application/json', `Content-ID: ${index + 1}`, ...(body !== undefined ? ['Content-Type: application/json'] : []), 'DataServiceVersion: 1.0'],
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
      const fail = (status: number, id?: string) => {
        failure ??= { index, status, kind: op.kind, ...(id !== undefined ? { id } : {}) };
      };
      switch (op.kind) {
        case 'createProduct': {
          const title = this.title(w);
          parts.push(part('POST', 'Products', { Title: title, Price: '9.5', StockAmount: op.stock }));
          created.push({ index, kind: 'product', title, stock: op.stock });
          return;
        }
        case 'mergeProduct': {
          const id = this.productId(w, op.product);
          const title = this.title(w);
          parts.push(part('MERGE', `Products(${id}L)`, { Title: title, StockAmount: op.stock }));
          const p = predicted.get(id);
          if (!p) return fail(404, id);
          p.title = title;
          p.stock = op.stock;
          return;
        }
        case 'deleteProduct': {
          const id = this.productId(w, op.product);
          parts.push(part('DELETE', `Products(${id}L)`));
          const p = predicted.get(id);
          if (p) {
            for (const sid of p.specifics.keys()) deletedHere.add(sid);
            deletedHere.add(id);
            predicted.delete(id);
          } else if (!deletedHere.has(id)) fail(404, id);
          return;
        }
        case 'createSpecific': {
          const productId = this.productId(w, op.product);
          const specificName = SPECIFIC_NAMES[op.name]!;
          const value = this.value(w);
          parts.push(part('POST', 'ProductSpecifics', { ProductId: productId, Name: specificName, Value: value }));
          const p = predicted.get(productId);
          if (!p) return fail(400, productId);
          if ([...p.specifics.values()].some((s) => s.name === specificName)) return fail(409);
          // The id is known only from the answer; a placeholder keeps the name taken.
          p.specifics.set(`pending-${index}`, { name: specificName, value });
          created.push({ index, kind: 'specific', productId, name: specificName, value });
          return;
        }
        case 'deleteSpecific': {
          const id = this.specificId(w, op.specific);
          parts.push(part('DELETE', `ProductSpecifics(${id}L)`));
          const p = specificOwner(predicted, id);
          if (p) {
            p.specifics.delete(id);
            deletedHere.add(id);
          } else if (!deletedHere.has(id)) fail(404, id);
          return;
        }
      }
    });
    const body = batchBody([
      changesetPart(parts),
      httpPart({ method: 'GET', target: 'Products?$expand=ProductSpecifics', headers: ['Accept: application/json', 'MaxDataServiceVersion: 2.0'] }),
    ]);
    const res = await postBatch(live, sellers[w], body);
    this.noForeign(w, 'batch', res.body, failure?.id);
    const [changeset, query] = readBatchAnswer(res);
    check(changeset !== undefined && query !== undefined && query.kind === 'response', 'two answer parts');
    if (failure) {
      check(changeset!.kind === 'response', `a failed changeset answers one error part: ${JSON.stringify(c.operations)}`);
      if (changeset!.kind !== 'response') return;
      const answer = changeset!.response;
      check(answer.status === failure.status, `changeset ${JSON.stringify(c.operations)}: operation ${failure.index + 1} should fail with ${failure.status}, got ${answer.status} ${answer.body.slice(0, 200)}`);
      check(answer.headers.get('content-id') === String(failure.index + 1), `the failure names operation ${failure.index + 1}`);
      if (failure.id !== undefined) this.refusal(`batch ${failure.kind}`, failure.id, answer);
    } else {
      check(changeset!.kind === 'changeset', `changeset ${JSON.stringify(c.operations)} should succeed: ${changeset!.kind === 'response' ? `${changeset!.response.status} ${changeset!.response.body.slice(0, 300)}` : ''}`);
      if (changeset!.kind !== 'changeset') return;
      const answers = changeset!.responses;
      check(answers.length === c.operations.length, 'one answer per operation');
      // The model takes the changeset: created rows get the ids of their answers.
      for (const p of predicted.values()) for (const sid of [...p.specifics.keys()]) if (sid.startsWith('pending-')) p.specifics.delete(sid);
      for (const made of created) {
        const answer = answers[made.index]!;
        check(answer.status === 201, `operation ${made.index + 1}: ${answer.status} ${answer.body.slice(0, 200)}`);
        const id = String((JSON.parse(answer.body) as { d: Json }).d.Id);
        this.everCreated[w].add(id);
        if (made.kind === 'product') predicted.set(id, { title: made.title!, stock: made.stock!, specifics: new Map() });
        else predicted.get(made.productId!)?.specifics.set(id, { name: made.name!, value: made.value! });
      }
      this.world[w] = predicted;
    }
    // The query part after the changeset sees exactly the account's rows of the model.
    const rows = rowsOf((query as { response: { body: string } }).response.body);
    const mine = this.world[w];
    check(sameSet(rows.map((r) => String(r.Id)), [...mine.keys()]), `after the batch: ${rows.map((r) => r.Id).join(',')} but the model has ${[...mine.keys()].join(',')}`);
    for (const row of rows) checkProduct(String(row.Id), mine.get(String(row.Id))!, row, true);
  }

  /** Both accounts' whole catalogues against the model. */
  async checkWorld(): Promise<void> {
    for (const w of ['a', 'b'] as const) {
      const res = await call(w, 'GET', '/Products?$expand=ProductSpecifics');
      assert.equal(res.status, 200);
      this.noForeign(w, 'final read', res.body);
      const rows = rowsOf(res.body);
      check(sameSet(rows.map((r) => String(r.Id)), [...this.world[w].keys()]), `${w}'s products at the end of the run`);
      for (const row of rows) checkProduct(String(row.Id), this.world[w].get(String(row.Id))!, row, true);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Checks

class Violation extends Error {}

function check(ok: boolean, message: string): void {
  if (!ok) {
    figures.violations++;
    throw new Violation(message);
  }
}

function expectStatus(res: HttpResponse, status: number, c: Command): void {
  check(res.status === status, `${JSON.stringify(c)}: expected ${status}, got ${res.status} ${res.body.slice(0, 300)}`);
}

/** The entries of a JSON feed, verbose v1 (`d: [...]`) or v2 (`d: {results: [...]}`). */
function rowsOf(body: string): Json[] {
  const d = (JSON.parse(body) as { d: Json[] | { results: Json[] } }).d;
  return Array.isArray(d) ? d : d.results;
}

function sameSet(actual: readonly string[], expected: readonly string[]): boolean {
  return actual.length === expected.length && [...actual].sort().join() === [...expected].sort().join();
}

function checkProduct(id: string, p: ProductModel | undefined, row: Json, withSpecifics = false): void {
  check(p !== undefined, `Products(${id}) is not in the model`);
  check(row.Title === p!.title && row.StockAmount === p!.stock, `Products(${id}): ${String(row.Title)}/${String(row.StockAmount)}, the model has ${p!.title}/${p!.stock}`);
  if (!withSpecifics) return;
  const expanded = row.ProductSpecifics as Json[] | { results: Json[] };
  const specifics = Array.isArray(expanded) ? expanded : expanded.results;
  check(sameSet(specifics.map((s) => String(s.Id)), [...p!.specifics.keys()]), `Products(${id})/ProductSpecifics: ${specifics.map((s) => s.Id).join(',')}`);
  for (const s of specifics) check(s.Value === p!.specifics.get(String(s.Id))?.value, `ProductSpecifics(${String(s.Id)}) Value`);
}

async function emptyAccounts(): Promise<void> {
  const answers = await Promise.all((['a', 'b'] as const).map((w) => call(w, 'POST', '/DeleteAccountData?type=0')));
  for (const res of answers) assert.equal(res.status, 200, res.body);
}

// ---------------------------------------------------------------------------------------------

test('generated command sequences of two accounts keep each account to its own rows', async (t) => {
  const runs = byTier(200, 1000);
  let failure: unknown;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { maxLength: 50, size: 'max' }), async (commands) => {
        figures.runs++;
        await emptyAccounts();
        const run = new Run();
        for (const c of commands) await run.execute(c);
        await run.checkWorld();
      }),
      { numRuns: runs, ...(process.env.TEST_SEED ? { seed: Number(process.env.TEST_SEED) } : {}) },
    );
  } catch (e) {
    failure = e;
  }
  reportFigures('tenant properties', figures, t);
  if (failure) throw failure;
  assert.ok(figures.runs >= runs && figures.commands > runs * 10, `${figures.runs} runs of ${figures.commands} commands`);
  assert.ok(figures.foreignOrMissingCommands > runs, 'foreign and missing ids were exercised');
  assert.equal(figures.violations, 0);
});
