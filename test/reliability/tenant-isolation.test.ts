/**
 * Tenant isolation matrix, generated from the entity model (src/model), not from a hand list.
 *
 * Three accounts A, B and C each hold two rows of every entity set (catalogue sets created through
 * the API, platform sets written through the store as the platform does), every many-to-many link,
 * and values tagged with the account (`Qx7A…`, `Qx7B…`). Then A probes B's and C's rows with every
 * kind of access the model allows: reads by key, properties, navigations, $links, $count,
 * $expand, $inlinecount, $filter on every foreign key; PUT, MERGE, PATCH and DELETE, also
 * tunnelled through POST with X-HTTP-Method; POST under a foreign parent; creates and updates whose
 * foreign keys, bindings or deep-insert payloads name foreign rows; $links writes; service
 * operations; and every one of these again inside $batch (query parts and one-operation
 * changesets).
 *
 * - Each probe is sent with B's id, with C's id and with an id that exists nowhere: the three
 *   answers must be the same (status, content type, Location, Allow, body with the id normalised).
 * - No answer to A holds an id of B's or C's rows or one of their tagged values, and A's own
 *   collections, counts and inline counts hold exactly A's rows.
 * - The raw rows of B and C (and of A) hash the same before and after the whole matrix.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { model } from '../../src/model/catalogue-model';
import type { EntityTypeDef, NavigationDef, PropertyDef, ReferenceRelation, ServiceOperationDef } from '../../src/model/types';
import { VERSION_COLUMN } from '../../src/store/schema';
import type { EdmValue } from '../../src/odata/edm';
import type { HttpResponse } from '../support/http-client';
import { asSeller, newSeller, startLive, storeRow, tenantRows, type LiveService, type Seller } from '../support/live-service';
import { atomEntry, type EntryValue } from '../support/entries';
import { reportFigures } from '../support/figures';
import { batchBody, changesetPart, httpPart, postBatch, readBatchAnswer, type PartAnswer, type TopAnswer } from '../batch/support';
import { entityType as typeOf } from '../support/model-types';

type Json = Record<string, unknown>;

/** An id no row of any account ever had (ids come from one small sequence). */
const MISSING = '870000000123';

/** Tags in every string value an account writes, so a leaked value is found by text search. */
const TAG = { a: 'Qx7A', b: 'Qx7B', c: 'Qx7C' } as const;

const REFERENCES = model.relations.filter((r): r is ReferenceRelation => r.kind === 'reference');
const FOREIGN_KEY_NAMES = new Set(REFERENCES.map((r) => r.foreignKey));

const referencesOf = (type: EntityTypeDef) => REFERENCES.filter((r) => r.dependent === type.name);
const creatable = (type: EntityTypeDef) => type.access === 'catalogue';

/** Every set name the service answers to (aliases included) with its type. */
const SETS: [string, EntityTypeDef][] = model.entityTypes.flatMap((t) => [t.setName, ...t.setAliases].map((s): [string, EntityTypeDef] => [s, t]));

/** Types in an order where every principal comes before its dependents. */
function creationOrder(): EntityTypeDef[] {
  const placed: EntityTypeDef[] = [];
  while (placed.length < model.entityTypes.length) {
    const next = model.entityTypes.find(
      (t) => !placed.includes(t) && referencesOf(t).every((r) => r.principal === t.name || placed.some((p) => p.name === r.principal)),
    );
    assert.ok(next, 'the model has no reference cycle');
    placed.push(next);
  }
  return placed;
}

// ---------------------------------------------------------------------------------------------
// Values derived from the model

/** Rows per type and account: two, so self-references (ProductRelations) and links have a pair. */
const ROWS = 2;

type Ids = Record<string, string[]>;

/** The principal row a foreign key of row `index` points at: the n-th reference to the same principal takes the next row. */
function foreignKeyValue(type: EntityTypeDef, r: ReferenceRelation, index: number, ids: Ids): string {
  return ids[r.principal]![index + ordinal(type, r)]!;
}

function ordinal(type: EntityTypeDef, r: ReferenceRelation): number {
  return referencesOf(type)
    .filter((x) => x.principal === r.principal)
    .indexOf(r);
}

/**
 * Whether row `index` of `type` can point at distinct principal rows without wrapping around:
 * a ProductRelation 1 -> 0 next to 0 -> 1 would be a cycle, which the service refuses.
 */
function hasPrincipals(type: EntityTypeDef, index: number, ids: Ids): boolean {
  return referencesOf(type).every((r) => index + ordinal(type, r) < ids[r.principal]!.length);
}

/** A value for a plain property, unique per account, row and property, within the property's bounds. */
function plainValue(p: PropertyDef, tag: string, index: number): EdmValue {
  switch (p.type) {
    case 'Edm.String':
      if (p.name.endsWith('Url')) return `https://img.example.com/${tag}/${index}/${p.name}.jpg`;
      return `${tag}${index}${p.name}`.slice(0, p.maxLength ?? 255);
    case 'Edm.Int32':
      return Math.min((p.min ?? 0) + index, p.max ?? Number.MAX_SAFE_INTEGER);
    case 'Edm.Int64':
      return BigInt(1000 + index);
    case 'Edm.Decimal':
      return `${index + 1}.5`;
    case 'Edm.Boolean':
      return index % 2 === 0;
    case 'Edm.DateTime':
      return null;
  }
}

/** The wire form of a value in a JSON verbose body (Int64 and Decimal as strings). */
const wire = (v: EdmValue): unknown => (typeof v === 'bigint' ? String(v) : v);

/** A create body for `type` as `tag`'s row `index`, its foreign keys naming rows of `ids`. */
function createBody(type: EntityTypeDef, tag: string, index: number, ids: Ids): Json {
  const body: Json = {};
  for (const p of type.properties) {
    if (p.access !== 'writable') continue;
    const r = referencesOf(type).find((x) => x.foreignKey === p.name);
    if (r) body[p.name] = foreignKeyValue(type, r, index, ids);
    else if (p.type !== 'Edm.DateTime') body[p.name] = wire(plainValue(p, tag, index));
  }
  return body;
}

/** An update body: every writable property (a PUT needs the required ones), values of A. */
function updateBody(type: EntityTypeDef, ids: Ids): Json {
  return createBody(type, TAG.a, 0, ids);
}

// ---------------------------------------------------------------------------------------------
// The live service and three accounts

let live: LiveService;
const sellers: Record<'a' | 'b' | 'c', Seller> = {} as never;
const ids: Record<'a' | 'b' | 'c', Ids> = {} as never;
/** Every row id (any tenant table) of each account, read raw from the store. */
const rowIds: Record<'a' | 'b' | 'c', Set<string>> = {} as never;
const hashesBefore: Record<'a' | 'b' | 'c', string> = {} as never;

const figures = { cases: 0, foreignRowsSeen: 0, foreignWritesApplied: 0, mismatchedAnswers: 0 };
const problems: string[] = [];

function problem(text: string): void {
  if (problems.length < 40) problems.push(text);
}

function call(as: Seller, method: string, path: string, body?: Json | string, headers: Record<string, string> = {}): Promise<HttpResponse> {
  const h: Record<string, string> = { Accept: 'application/json', ...headers };
  if (body !== undefined) h['Content-Type'] = typeof body === 'string' ? 'application/atom+xml' : 'application/json';
  // Spaces of $filter expressions are escaped as a browser would.
  return asSeller(as, live.root + path.replace(/ /g, '%20'), { method, headers: h, ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }) });
}

async function seedThroughStore(accountId: number, type: EntityTypeDef, values: Record<string, EdmValue>): Promise<string> {
  return String(await storeRow(live, accountId, type, values));
}

/** Two rows of every set, every many-to-many link, all tagged with the account. */
async function populate(key: 'a' | 'b' | 'c'): Promise<Ids> {
  const seller = sellers[key];
  const tag = TAG[key];
  const out: Ids = {};
  for (const type of creationOrder()) {
    out[type.name] = [];
    for (let index = 0; index < ROWS && hasPrincipals(type, index, out); index++) {
      if (creatable(type)) {
        const res = await call(seller, 'POST', `/${type.setName}`, createBody(type, tag, index, out));
        assert.equal(res.status, 201, `create ${type.setName}: ${res.body}`);
        out[type.name]!.push(String((JSON.parse(res.body) as { d: Json }).d.Id));
      } else {
        const values: Record<string, EdmValue> = {};
        for (const p of type.properties) {
          if (p.access === 'key' || p.timestamp) continue;
          const r = referencesOf(type).find((x) => x.foreignKey === p.name);
          const v = r ? BigInt(foreignKeyValue(type, r, index, out)) : plainValue(p, tag, index);
          values[p.name] = p.type === 'Edm.Decimal' && v !== null ? String(v) : v;
        }
        out[type.name]!.push(await seedThroughStore(seller.accountId, type, values));
      }
    }
  }
  for (const r of model.relations) {
    if (r.kind !== 'linkTable') continue;
    const pairs: [number, number][] = r.left === r.right ? [[0, 1]] : [[0, 1], [1, 0], [0, 0]];
    for (const [l, rr] of pairs) {
      const res = await call(seller, 'POST', `/${typeOf(r.left).setName}(${out[r.left]![l]}L)/$links/${r.leftNav}`, { uri: `${typeOf(r.right).setName}(${out[r.right]![rr]}L)` });
      assert.equal(res.status, 204, `link ${r.name}: ${res.body}`);
    }
  }
  return out;
}

/** Columns a successful write of A's own row changes (a MERGE whose many-to-many binding is ignored). */
const WRITE_STAMPS = ['modification_date', VERSION_COLUMN];

async function accountRows(accountId: number, withoutStamps = false): Promise<{ hash: string; ids: Set<string> }> {
  const raw = await tenantRows(live, accountId);
  const rows = withoutStamps
    ? Object.fromEntries(
        Object.entries(raw).map(([table, list]) => [
          table,
          list.map((line) => {
            const row = JSON.parse(line) as Json;
            for (const column of WRITE_STAMPS) delete row[column];
            return JSON.stringify(row);
          }),
        ]),
      )
    : raw;
  const idsOfRows = new Set<string>();
  for (const list of Object.values(rows)) {
    for (const line of list) {
      const id = (JSON.parse(line) as Json).id;
      if (id !== undefined && id !== null) idsOfRows.add(String(id).replace(/n$/, ''));
    }
  }
  return { hash: createHash('sha256').update(JSON.stringify(rows)).digest('hex'), ids: idsOfRows };
}

before(async () => {
  live = await startLive();
  for (const key of ['a', 'b', 'c'] as const) sellers[key] = await newSeller(live, `iso-${key}`);
  for (const key of ['a', 'b', 'c'] as const) ids[key] = await populate(key);
  for (const key of ['a', 'b', 'c'] as const) {
    const { hash, ids: rowSet } = await accountRows(sellers[key].accountId, key === 'a');
    hashesBefore[key] = hash;
    rowIds[key] = rowSet;
  }
});

after(() => live.close());

// ---------------------------------------------------------------------------------------------
// Checking answers

/** Ids an answer names: Id and foreign-key members, entity and link URIs, Atom d:Id and d:<FK>. */
function idsIn(body: string): string[] {
  const found: string[] = [];
  // Entity and link URIs (`Products(12L)`), not JSON dates (`\/Date(1764000000000)\/`).
  for (const m of body.matchAll(/(?<![A-Za-z])([A-Z][A-Za-z]*)\((\d+)L?\)/g)) if (m[1] !== 'Date') found.push(m[2]!);
  for (const m of body.matchAll(/"([A-Za-z]*Id)":\s*"?(\d+)"?/g)) if (m[1] === 'Id' || FOREIGN_KEY_NAMES.has(m[1]!)) found.push(m[2]!);
  for (const m of body.matchAll(/<d:([A-Za-z]*Id)(?: [^>]*)?>(\d+)<\/d:/g)) if (m[1] === 'Id' || FOREIGN_KEY_NAMES.has(m[1]!)) found.push(m[2]!);
  return found;
}

/** Counts and records every id or tagged value of B or C in an answer to A. */
function checkNoForeignRows(label: string, body: string, probeIds: readonly string[] = []): void {
  for (const id of idsIn(body)) {
    // The probe's own id may be echoed in an error message or a URI of a refused request.
    if (probeIds.includes(id)) continue;
    if (rowIds.b.has(id) || rowIds.c.has(id)) {
      figures.foreignRowsSeen++;
      problem(`${label}: the answer names foreign row ${id}`);
    }
  }
  for (const tag of [TAG.b, TAG.c]) {
    if (body.includes(tag)) {
      figures.foreignRowsSeen++;
      problem(`${label}: the answer holds a value of another account (${tag})`);
    }
  }
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | undefined>;
  readonly body: string;
}

const fromHttp = (res: HttpResponse): Answer => ({
  status: res.status,
  headers: { 'content-type': res.headers['content-type'], location: res.headers.location, allow: res.headers.allow as string | undefined },
  body: res.body,
});

const fromPart = (part: PartAnswer): Answer => ({
  status: part.status,
  headers: { 'content-type': part.headers.get('content-type'), location: part.headers.get('location'), allow: part.headers.get('allow') },
  body: part.body,
});

/** What must be the same for a foreign and a missing id: everything, with the id written as <id>. */
function shape(answer: Answer, id: string): string {
  const idPattern = new RegExp(`(?<!\\d)${id}(?!\\d)`, 'g');
  // The feed's <updated> time goes first: its digits could hold the id.
  const norm = (s: string | undefined) => (s ?? '').replace(/<updated>[^<]*<\/updated>/g, '<updated/>').replace(idPattern, '<id>');
  return JSON.stringify({
    status: answer.status,
    contentType: answer.headers['content-type'],
    location: norm(answer.headers.location),
    allow: answer.headers.allow,
    body: norm(answer.body),
  });
}

/** B's and C's answers against the missing one; writes that succeeded on a foreign id are counted. */
function compare(label: string, write: boolean, answers: { b: Answer; c: Answer; missing: Answer }, foreign: { b: string; c: string }): void {
  figures.cases += 2;
  const expected = shape(answers.missing, MISSING);
  for (const key of ['b', 'c'] as const) {
    const answer = answers[key];
    // A write that a missing id also passes (a MERGE of A's own row that ignores a binding) did
    // nothing with the foreign row; the hashes of B and C prove that separately.
    if (write && answer.status >= 200 && answer.status < 300 && !(answers.missing.status >= 200 && answers.missing.status < 300)) {
      figures.foreignWritesApplied++;
      problem(`${label} with ${key.toUpperCase()}'s id succeeded: ${answer.status} ${answer.body.slice(0, 200)}`);
    }
    if (answer.status >= 500) problem(`${label}: ${answer.status}`);
    const actual = shape(answer, foreign[key]);
    if (actual !== expected) {
      figures.mismatchedAnswers++;
      let at = 0;
      while (at < actual.length && actual[at] === expected[at]) at++;
      const around = (s: string) => s.slice(Math.max(0, at - 150), at + 150);
      problem(`${label}: ${key.toUpperCase()}'s id answers unlike a missing one:\n  foreign …${around(actual)}\n  missing …${around(expected)}`);
    }
    checkNoForeignRows(label, answer.body, [foreign[key]]);
  }
}

// ---------------------------------------------------------------------------------------------
// The probes, generated from the model

interface Probe {
  readonly label: string;
  readonly method: string;
  /** Below the service root, starting with '/'; `id` is the foreign or missing id. */
  readonly path: (id: string) => string;
  readonly body?: (id: string) => Json | string;
  readonly headers?: Record<string, string>;
  /** Changes data when it succeeds (then a foreign id must not succeed). */
  readonly write: boolean;
  /** Also sent inside $batch (not for Atom bodies or tunnelled verbs, which a batch reads differently). */
  readonly batch: boolean;
  /** Which type the foreign id is of. */
  readonly target: string;
}

const navNames = (nav: NavigationDef) => [nav.name];
const own = (type: string, index = 0) => ids.a[type]![index]!;
const entityPath = (set: string, id: string) => `/${set}(${id}L)`;

/** Probes that address a row of `type` by key through `set`. */
function keyedProbes(set: string, type: EntityTypeDef): Probe[] {
  const probes: Probe[] = [];
  const read = (label: string, path: (id: string) => string, headers?: Record<string, string>, batch = true): Probe => ({
    label: `GET ${label}`,
    method: 'GET',
    path,
    write: false,
    batch,
    target: type.name,
    ...(headers ? { headers } : {}),
  });
  const at = (id: string) => entityPath(set, id);
  probes.push(read(`${set}(key)`, at));
  probes.push(read(`${set}(key) Atom`, at, { Accept: 'application/atom+xml' }, false));
  probes.push(read(`${set}(key) without L`, (id) => `/${set}(${id})`));
  probes.push(read(`${set}?$filter=Id eq key`, (id) => `/${set}?$filter=Id eq ${id}L`));
  probes.push(read(`${set}/$count?$filter=Id eq key`, (id) => `/${set}/$count?$filter=Id eq ${id}L`));
  for (const p of type.properties.slice(1, 3)) {
    probes.push(read(`${set}(key)/${p.name}`, (id) => `${at(id)}/${p.name}`));
    probes.push(read(`${set}(key)/${p.name}/$value`, (id) => `${at(id)}/${p.name}/$value`));
  }
  for (const nav of type.navigations) {
    const targetType = typeOf(nav.target);
    probes.push(read(`${set}(key)?$expand=${nav.name}`, (id) => `${at(id)}?$expand=${nav.name}`));
    for (const name of navNames(nav)) {
      probes.push(read(`${set}(key)/${name}`, (id) => `${at(id)}/${name}`));
      probes.push(read(`${set}(key)/$links/${name}`, (id) => `${at(id)}/$links/${name}`));
      if (!nav.many) continue;
      probes.push(read(`${set}(key)/${name}/$count`, (id) => `${at(id)}/${name}/$count`));
      probes.push(read(`${set}(key)/${name}?$inlinecount=allpages`, (id) => `${at(id)}/${name}?$inlinecount=allpages`));
      probes.push(read(`${set}(key)/${name}(own key)`, (id) => `${at(id)}/${name}(${own(nav.target)}L)`));
      if (nav.relation.kind === 'linkTable') {
        probes.push({ label: `POST ${set}(key)/$links/${name} to own`, method: 'POST', path: (id) => `${at(id)}/$links/${name}`, body: () => ({ uri: `${targetType.setName}(${own(nav.target)}L)` }), write: true, batch: true, target: type.name });
        probes.push({ label: `DELETE ${set}(key)/$links/${name}(own)`, method: 'DELETE', path: (id) => `${at(id)}/$links/${name}(${own(nav.target)}L)`, write: true, batch: true, target: type.name });
      }
      if (nav.relation.kind === 'reference' && creatable(targetType)) {
        const fk = nav.relation.foreignKey;
        const body = () => {
          const b = createBody(targetType, TAG.a, 1, ids.a);
          delete b[fk];
          return b;
        };
        probes.push({ label: `POST ${set}(key)/${name} (under a foreign parent)`, method: 'POST', path: (id) => `${at(id)}/${name}`, body, write: true, batch: true, target: type.name });
      }
    }
  }
  // Writes on the row itself.
  const body = () => updateBody(type, ids.a);
  for (const method of ['PUT', 'MERGE', 'PATCH']) {
    probes.push({ label: `${method} ${set}(key)`, method, path: at, body, write: true, batch: true, target: type.name });
    probes.push({ label: `${method} ${set}(key) Atom`, method, path: at, body: () => atomEntry(type, body() as Record<string, EntryValue>, { typed: true }), write: true, batch: false, target: type.name });
  }
  probes.push({ label: `DELETE ${set}(key)`, method: 'DELETE', path: at, write: true, batch: true, target: type.name });
  for (const method of ['MERGE', 'PUT', 'DELETE']) {
    probes.push({
      label: `POST ${set}(key) X-HTTP-Method: ${method}`,
      method: 'POST',
      path: at,
      ...(method === 'DELETE' ? {} : { body }),
      headers: { 'X-HTTP-Method': method },
      write: true,
      batch: false,
      target: type.name,
    });
  }
  probes.push({ label: `PUT ${set}(key)/${type.properties[1]!.name}`, method: 'PUT', path: (id) => `${at(id)}/${type.properties[1]!.name}`, body: () => ({ [type.properties[1]!.name]: null }), write: true, batch: true, target: type.name });
  return probes;
}

/** Probes of A's own rows and paths that name a foreign row of `type` inside them. */
function namingProbes(type: EntityTypeDef): Probe[] {
  const probes: Probe[] = [];
  const set = type.setName;
  // Through A's own parent, by the foreign child's key.
  for (const parent of model.entityTypes) {
    for (const nav of parent.navigations.filter((n) => n.many && n.target === type.name)) {
      const base = entityPath(parent.setName, own(parent.name));
      probes.push({ label: `GET ${parent.setName}(own)/${nav.name}(key)`, method: 'GET', path: (id) => `${base}/${nav.name}(${id}L)`, write: false, batch: true, target: type.name });
      probes.push({ label: `GET ${parent.setName}(own)/$links/${nav.name}(key)`, method: 'GET', path: (id) => `${base}/$links/${nav.name}(${id}L)`, write: false, batch: true, target: type.name });
      probes.push({ label: `MERGE ${parent.setName}(own)/${nav.name}(key)`, method: 'MERGE', path: (id) => `${base}/${nav.name}(${id}L)`, body: () => updateBody(type, ids.a), write: true, batch: true, target: type.name });
      probes.push({ label: `DELETE ${parent.setName}(own)/${nav.name}(key)`, method: 'DELETE', path: (id) => `${base}/${nav.name}(${id}L)`, write: true, batch: true, target: type.name });
      if (nav.relation.kind === 'linkTable') {
        probes.push({ label: `POST ${parent.setName}(own)/$links/${nav.name} naming key`, method: 'POST', path: () => `${base}/$links/${nav.name}`, body: (id) => ({ uri: `${set}(${id}L)` }), write: true, batch: true, target: type.name });
        probes.push({ label: `POST ${parent.setName}(own)/$links/${nav.name} naming absolute key`, method: 'POST', path: () => `${base}/$links/${nav.name}`, body: (id) => ({ uri: `${live.root}/${set}(${id}L)` }), write: true, batch: true, target: type.name });
        probes.push({ label: `DELETE ${parent.setName}(own)/$links/${nav.name}(key)`, method: 'DELETE', path: (id) => `${base}/$links/${nav.name}(${id}L)`, write: true, batch: true, target: type.name });
      }
    }
    // A to-one link of A's row set to the foreign row.
    for (const nav of parent.navigations.filter((n) => !n.many && n.target === type.name)) {
      const base = entityPath(parent.setName, own(parent.name));
      probes.push({ label: `PUT ${parent.setName}(own)/$links/${nav.name} naming key`, method: 'PUT', path: () => `${base}/$links/${nav.name}`, body: (id) => ({ uri: `${set}(${id}L)` }), write: true, batch: true, target: type.name });
    }
  }
  // $filter, $count and $inlinecount on every foreign key that points at this type.
  for (const r of REFERENCES.filter((x) => x.principal === type.name)) {
    const dependentSet = typeOf(r.dependent).setName;
    const filter = (id: string) => `$filter=${r.foreignKey} eq ${id}L`;
    probes.push({ label: `GET ${dependentSet}?$filter=${r.foreignKey} eq key`, method: 'GET', path: (id) => `/${dependentSet}?${filter(id)}`, write: false, batch: true, target: type.name });
    probes.push({ label: `GET ${dependentSet}?$filter=${r.foreignKey} eq key Atom`, method: 'GET', path: (id) => `/${dependentSet}?${filter(id)}`, headers: { Accept: 'application/atom+xml' }, write: false, batch: false, target: type.name });
    probes.push({ label: `GET ${dependentSet}/$count?$filter=${r.foreignKey} eq key`, method: 'GET', path: (id) => `/${dependentSet}/$count?${filter(id)}`, write: false, batch: true, target: type.name });
    probes.push({ label: `GET ${dependentSet}?$inlinecount=allpages&$filter=${r.foreignKey} eq key`, method: 'GET', path: (id) => `/${dependentSet}?$inlinecount=allpages&${filter(id)}`, write: false, batch: true, target: type.name });
    probes.push({ label: `GET ${dependentSet}?$filter=${r.foreignKey} eq key or Id eq own`, method: 'GET', path: (id) => `/${dependentSet}?$filter=${r.foreignKey} eq ${id}L or Id eq ${own(r.dependent)}L`, write: false, batch: true, target: type.name });
    const dependent = typeOf(r.dependent);
    if (!creatable(dependent)) continue;
    // Creates and updates whose foreign key names the foreign row.
    const withKey = (id: string) => ({ ...createBody(dependent, TAG.a, 1, ids.a), [r.foreignKey]: id });
    probes.push({ label: `POST ${dependentSet} ${r.foreignKey}=key`, method: 'POST', path: () => `/${dependentSet}`, body: withKey, write: true, batch: true, target: type.name });
    probes.push({ label: `POST ${dependentSet} ${r.foreignKey}=key Atom`, method: 'POST', path: () => `/${dependentSet}`, body: (id) => atomEntry(dependent, withKey(id) as Record<string, EntryValue>, { typed: true }), write: true, batch: false, target: type.name });
    probes.push({ label: `MERGE ${dependentSet}(own) ${r.foreignKey}=key`, method: 'MERGE', path: () => entityPath(dependentSet, own(r.dependent)), body: (id) => ({ [r.foreignKey]: id }), write: true, batch: true, target: type.name });
    probes.push({ label: `PUT ${dependentSet}(own) ${r.foreignKey}=key`, method: 'PUT', path: () => entityPath(dependentSet, own(r.dependent)), body: (id) => ({ ...updateBody(dependent, ids.a), [r.foreignKey]: id }), write: true, batch: true, target: type.name });
    probes.push({ label: `POST ${dependentSet}(own) X-HTTP-Method: MERGE ${r.foreignKey}=key`, method: 'POST', path: () => entityPath(dependentSet, own(r.dependent)), body: (id) => ({ [r.foreignKey]: id }), headers: { 'X-HTTP-Method': 'MERGE' }, write: true, batch: false, target: type.name });
    if (r.principalNav) {
      // Under A's own parent, the body naming the foreign row as the parent.
      const parentPath = `${entityPath(type.setName, own(type.name))}/${r.principalNav}`;
      probes.push({ label: `POST ${type.setName}(own)/${r.principalNav} ${r.foreignKey}=key`, method: 'POST', path: () => parentPath, body: withKey, write: true, batch: true, target: type.name });
    }
    if (r.dependentNav) {
      // A binding by URI instead of the property.
      const bound = (id: string) => {
        const b: Json = { ...createBody(dependent, TAG.a, 1, ids.a), [r.dependentNav!]: { __metadata: { uri: `${live.root}/${type.setName}(${id}L)` } } };
        delete b[r.foreignKey];
        return b;
      };
      probes.push({ label: `POST ${dependentSet} binding ${r.dependentNav} to key`, method: 'POST', path: () => `/${dependentSet}`, body: bound, write: true, batch: true, target: type.name });
      probes.push({ label: `MERGE ${dependentSet}(own) binding ${r.dependentNav} to key`, method: 'MERGE', path: () => entityPath(dependentSet, own(r.dependent)), body: (id) => ({ [r.dependentNav!]: { __metadata: { uri: `${type.setName}(${id}L)` } } }), write: true, batch: true, target: type.name });
    }
    // Deep insert under a new parent of A whose nested child names the foreign row.
    for (const parentRef of referencesOf(dependent).filter((x) => x !== r && x.principalNav && creatable(typeOf(x.principal)))) {
      const parent = typeOf(parentRef.principal);
      probes.push({
        label: `POST ${parent.setName} deep-inserting ${parentRef.principalNav} with ${r.foreignKey}=key`,
        method: 'POST',
        path: () => `/${parent.setName}`,
        body: (id) => {
          const child: Json = { ...createBody(dependent, TAG.a, 1, ids.a), [r.foreignKey]: id };
          delete child[parentRef.foreignKey];
          return { ...createBody(parent, TAG.a, 1, ids.a), [parentRef.principalNav!]: [child] };
        },
        write: true,
        batch: true,
        target: type.name,
      });
    }
  }
  // Many-to-many bindings in a create body.
  for (const r of model.relations) {
    if (r.kind !== 'linkTable') continue;
    for (const [owner, navName, target] of [[r.left, r.leftNav, r.right], [r.right, r.rightNav, r.left]] as const) {
      if (target !== type.name || !creatable(typeOf(owner))) continue;
      const ownerSet = typeOf(owner).setName;
      probes.push({
        label: `POST ${ownerSet} binding ${navName} to key`,
        method: 'POST',
        path: () => `/${ownerSet}`,
        body: (id) => ({ ...createBody(typeOf(owner), TAG.a, 1, ids.a), [navName]: [{ __metadata: { uri: `${set}(${id}L)` } }] }),
        write: true,
        batch: true,
        target: type.name,
      });
      probes.push({
        label: `MERGE ${ownerSet}(own) binding ${navName} to key`,
        method: 'MERGE',
        path: () => entityPath(ownerSet, own(owner)),
        body: (id) => ({ [navName]: { results: [{ __metadata: { uri: `${live.root}/${set}(${id}L)` } }] } }),
        write: true,
        batch: true,
        target: type.name,
      });
    }
  }
  return probes;
}

/** A service operation's parameter that names an entity: `productVariationId` -> ProductVariation. */
function entityOfParameter(name: string): EntityTypeDef | undefined {
  if (!name.endsWith('Id')) return undefined;
  return model.typeByName.get(name[0]!.toUpperCase() + name.slice(1, -2)); // profileId names no entity
}

/** Every service operation, once per parameter that names an entity (DeleteAccountData names none). */
function operationProbes(): Probe[] {
  const probes: Probe[] = [];
  const argument = (op: ServiceOperationDef, name: string, type: string) => {
    const p = op.parameters.find((x) => x.name === name)!;
    if (p.type === 'Edm.Int64') {
      const t = entityOfParameter(p.name);
      return t ? `${own(t.name)}L` : '1L';
    }
    return p.type === 'Edm.Boolean' ? 'false' : p.type === 'Edm.Decimal' ? '1.5M' : type;
  };
  for (const op of model.operations) {
    for (const p of op.parameters) {
      const target = entityOfParameter(p.name);
      if (!target) continue;
      const query = (id: string) =>
        op.parameters
          .filter((x) => x.required || x === p)
          .map((x) => `${x.name}=${x === p ? `${id}L` : argument(op, x.name, '1')}`)
          .join('&');
      probes.push({ label: `${op.httpMethod} ${op.name} ${p.name}=key`, method: op.httpMethod, path: (id) => `/${op.name}?${query(id)}`, write: op.httpMethod === 'POST', batch: true, target: target.name });
    }
  }
  return probes;
}

function allProbes(): Probe[] {
  return [...SETS.flatMap(([set, type]) => keyedProbes(set, type)), ...model.entityTypes.flatMap(namingProbes), ...operationProbes()];
}

// ---------------------------------------------------------------------------------------------
// Running a probe directly and in $batch

const foreignIdOf = (key: 'b' | 'c', probe: Probe) => ids[key][probe.target]![0]!;

function send(probe: Probe, id: string): Promise<HttpResponse> {
  return call(sellers.a, probe.method, probe.path(id), probe.body?.(id), probe.headers ?? {});
}

function batchOperation(probe: Probe, id: string, contentId: number): string {
  const body = probe.body?.(id);
  return httpPart({
    method: probe.method,
    target: probe.path(id).slice(1).replace(/ /g, '%20'),
    headers: ['Accept: application/json', `Content-ID: ${contentId}`, ...(body !== undefined ? ['Content-Type: application/json'] : []), 'DataServiceVersion: 1.0', 'MaxDataServiceVersion: 2.0'],
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

/** The probes as one batch: a query part per read, a one-operation changeset per write. */
async function sendBatch(probes: readonly Probe[], idOf: (p: Probe) => string): Promise<Answer[]> {
  const parts = probes.map((p, i) => (p.method === 'GET' ? batchOperation(p, idOf(p), i + 1) : changesetPart([batchOperation(p, idOf(p), i + 1)], `changeset_iso_${i}`)));
  const answers: TopAnswer[] = readBatchAnswer(await postBatch(live, sellers.a, batchBody(parts)));
  assert.equal(answers.length, probes.length);
  return answers.map((a) => fromPart(a.kind === 'response' ? a.response : a.responses[0]!));
}

// ---------------------------------------------------------------------------------------------

describe('tenant isolation matrix (A against B and C)', () => {
  let probes: Probe[];
  before(() => {
    probes = allProbes();
  });

  test('every probe answers for a foreign id exactly as for a missing id, directly', async () => {
    for (const probe of probes) {
      // The three requests of a probe run at once: each is refused, so their order does not matter.
      const [b, c, missing] = await Promise.all([send(probe, foreignIdOf('b', probe)), send(probe, foreignIdOf('c', probe)), send(probe, MISSING)]);
      const answers = { b: fromHttp(b), c: fromHttp(c), missing: fromHttp(missing) };
      compare(probe.label, probe.write, answers, { b: foreignIdOf('b', probe), c: foreignIdOf('c', probe) });
    }
  });

  test('every probe answers the same inside $batch, as query parts and changesets', async () => {
    const batched = probes.filter((p) => p.batch);
    const PER_BATCH = 90;
    for (let start = 0; start < batched.length; start += PER_BATCH) {
      const chunk = batched.slice(start, start + PER_BATCH);
      const [b, c, missing] = await Promise.all([sendBatch(chunk, (p) => foreignIdOf('b', p)), sendBatch(chunk, (p) => foreignIdOf('c', p)), sendBatch(chunk, () => MISSING)]);
      chunk.forEach((probe, i) => compare(`$batch ${probe.label}`, probe.write, { b: b[i]!, c: c[i]!, missing: missing[i]! }, { b: foreignIdOf('b', probe), c: foreignIdOf('c', probe) }));
    }
  });

  test("A's collections, counts, expansions and links hold exactly A's rows", async () => {
    const a = sellers.a;
    const ownIds = rowIds.a;
    const checkCollection = (label: string, res: HttpResponse) => {
      figures.cases++;
      if (res.status !== 200) problem(`${label}: ${res.status} ${res.body.slice(0, 200)}`);
      checkNoForeignRows(label, res.body);
      for (const id of idsIn(res.body)) if (!ownIds.has(id)) problem(`${label}: ${id} is not one of A's rows`);
    };
    for (const [set, type] of SETS) {
      const count = ids.a[type.name]!.length;
      const feed = await call(a, 'GET', `/${set}?$inlinecount=allpages`);
      checkCollection(`GET ${set}?$inlinecount=allpages`, feed);
      const d = (JSON.parse(feed.body) as { d: { results: Json[]; __count: string } }).d;
      assert.equal(d.__count, String(count), `${set} __count`);
      assert.deepEqual(d.results.map((r) => String(r.Id)).sort(), [...ids.a[type.name]!].sort(), `${set} rows`);
      assert.equal((await call(a, 'GET', `/${set}/$count`)).body, String(count), `${set}/$count`);
      checkCollection(`GET ${set} Atom`, await call(a, 'GET', `/${set}`, undefined, { Accept: 'application/atom+xml' }));
      if (type.navigations.length) {
        checkCollection(`GET ${set}?$expand=all`, await call(a, 'GET', `/${set}?$expand=${type.navigations.map((n) => n.name).join(',')}`));
      }
      for (const nav of type.navigations) {
        for (const id of ids.a[type.name]!) {
          const res = await call(a, 'GET', `${entityPath(set, id)}/${nav.name}`);
          // An unset to-one navigation answers 404 (a relation row of A may point elsewhere).
          if (!nav.many && res.status === 404) continue;
          checkCollection(`GET ${set}(own)/${nav.name}`, res);
          checkCollection(`GET ${set}(own)/$links/${nav.name}`, await call(a, 'GET', `${entityPath(set, id)}/$links/${nav.name}`));
          if (nav.many) checkCollection(`GET ${set}(own)/${nav.name}?$inlinecount=allpages`, await call(a, 'GET', `${entityPath(set, id)}/${nav.name}?$inlinecount=allpages`));
        }
      }
    }
    // The collections are not vacuously empty: A's own ids do appear.
    const products = await call(a, 'GET', `/Products(${own('Product')}L)/ProductImages`);
    assert.ok(idsIn(products.body).length > 0, products.body);
  });

  test("the raw rows of B and C hash the same as before the matrix (and A's, apart from its write stamps)", async () => {
    for (const key of ['a', 'b', 'c'] as const) {
      const { hash } = await accountRows(sellers[key].accountId, key === 'a');
      if (hash !== hashesBefore[key]) {
        if (key !== 'a') figures.foreignWritesApplied++;
        problem(`the rows of ${key.toUpperCase()} changed during the matrix`);
      }
    }
  });

  test('figures', (t) => {
    reportFigures('tenant isolation', figures, t);
    assert.ok(figures.cases > 1000, `the matrix ran ${figures.cases} cases`);
    assert.deepEqual(problems, []);
    assert.deepEqual({ foreignRowsSeen: figures.foreignRowsSeen, foreignWritesApplied: figures.foreignWritesApplied, mismatchedAnswers: figures.mismatchedAnswers }, { foreignRowsSeen: 0, foreignWritesApplied: 0, mismatchedAnswers: 0 });
  });
});
