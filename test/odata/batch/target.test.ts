/**
 * resolveTarget: the three target forms of an inner request, `$n` references, and targets
 * outside the service (400).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { resolveTarget } from '../../../src/odata/batch';
import { ODataError } from '../../../src/odata/errors';
import { SERVICE_PATH } from './fixtures';

const resolve = (target: string) => resolveTarget(target, SERVICE_PATH);

test('relative targets are relative to the service root', () => {
  assert.deepEqual(resolve('Products'), { path: '/Products', query: '' });
  assert.deepEqual(resolve('Products(1L)/ProductImages?$top=1&$skip=2'), { path: '/Products(1L)/ProductImages', query: '$top=1&$skip=2' });
  assert.deepEqual(resolve('Products(1L)/$links/Catalogs(5L)'), { path: '/Products(1L)/$links/Catalogs(5L)', query: '' });
  assert.deepEqual(resolve('ReviseInventoryStatus?productId=123L&stockAmount=5'), { path: '/ReviseInventoryStatus', query: 'productId=123L&stockAmount=5' });
  assert.deepEqual(resolve(''), { path: '', query: '' });
  assert.deepEqual(resolve('?$format=json'), { path: '', query: '$format=json' });
  // $metadata and $batch are resources of the root, not Content-ID references.
  assert.deepEqual(resolve('$metadata'), { path: '/$metadata', query: '' });
  assert.deepEqual(resolve('$batch'), { path: '/$batch', query: '' });
});

test('absolute-path targets lie under the service path, matched case-insensitively', () => {
  assert.deepEqual(resolve('/publicapi/v1/api.svc/Products(1L)'), { path: '/Products(1L)', query: '' });
  assert.deepEqual(resolve('/PublicAPI/V1/Api.Svc/Products(1L)?$expand=ProductImages'), { path: '/Products(1L)', query: '$expand=ProductImages' });
  assert.deepEqual(resolve('/publicapi/v1/api.svc'), { path: '', query: '' });
  assert.deepEqual(resolve('/publicapi/v1/api.svc/'), { path: '/', query: '' });
  assert.deepEqual(resolve('/publicapi/v1/api.svc?$format=json'), { path: '', query: '$format=json' });
  // A trailing slash on the configured service path changes nothing.
  assert.deepEqual(resolveTarget('/publicapi/v1/api.svc/Products', `${SERVICE_PATH}/`), { path: '/Products', query: '' });
});

test('absolute-URI targets: any host, http or https, under the service path', () => {
  assert.deepEqual(resolve('https://shop.example.com/publicapi/v1/api.svc/ProductVariations(7L)'), { path: '/ProductVariations(7L)', query: '' });
  assert.deepEqual(resolve('http://localhost:8080/publicapi/v1/api.svc/Products?$filter=Id%20eq%205'), { path: '/Products', query: '$filter=Id%20eq%205' });
  assert.deepEqual(resolve('HTTPS://HOST/PUBLICAPI/V1/API.SVC/Catalogs(2L)'), { path: '/Catalogs(2L)', query: '' });
  assert.deepEqual(resolve('https://user@[::1]:443/publicapi/v1/api.svc'), { path: '', query: '' });
});

test('$n references an earlier Content-ID, with or without a path below it', () => {
  assert.deepEqual(resolve('$1'), { reference: '1', path: '', query: '' });
  assert.deepEqual(resolve('$1/ProductImages'), { reference: '1', path: '/ProductImages', query: '' });
  assert.deepEqual(resolve('$12/$links/Catalogs?x=1'), { reference: '12', path: '/$links/Catalogs', query: 'x=1' });
  assert.deepEqual(resolve('$newProduct/Catalogs'), { reference: 'newProduct', path: '/Catalogs', query: '' });
});

test('$n is the first segment after the service root in absolute URIs and absolute paths too (the .NET client)', () => {
  assert.deepEqual(resolve('http://host:8080/publicapi/v1/api.svc/$1/ProductVariations'), { reference: '1', path: '/ProductVariations', query: '' });
  assert.deepEqual(resolve('https://HOST/PublicApi/v1/api.svc/$3/$links/Product'), { reference: '3', path: '/$links/Product', query: '' });
  assert.deepEqual(resolve('/publicapi/v1/api.svc/$2'), { reference: '2', path: '', query: '' });
  assert.deepEqual(resolve('/publicapi/v1/api.svc/$2/ProductImages?$format=json'), { reference: '2', path: '/ProductImages', query: '$format=json' });
  // Still resources of the root, in every form.
  assert.deepEqual(resolve('http://host/publicapi/v1/api.svc/$metadata'), { path: '/$metadata', query: '' });
  assert.deepEqual(resolve('/publicapi/v1/api.svc/$batch'), { path: '/$batch', query: '' });
  assert.throws(() => resolve('http://host/publicapi/v1/api.svc/$/Products'), ODataError);
});

test('nothing is percent-decoded', () => {
  assert.deepEqual(resolve("Products(%271%27)?$filter=Title%20eq%20'a+b'"), { path: '/Products(%271%27)', query: "$filter=Title%20eq%20'a+b'" });
  assert.deepEqual(resolve('/publicapi/v1/api.svc/%50roducts'), { path: '/%50roducts', query: '' });
});

test('a target outside the service is a 400', () => {
  for (const target of [
    '/other.svc/Products',
    '/publicapi/v1/api.svcX/Products',
    '/publicapi/v1/Products',
    '//shop.example.com/publicapi/v1/api.svc/Products',
    'https://shop.example.com/other/Products',
    'https://shop.example.com',
    'https://shop.example.com/',
    'ftp://shop.example.com/publicapi/v1/api.svc/Products',
    '/publicapi/v1/api.svc/../admin',
    'Products/../../admin',
    '$1/../Products',
    './Products',
    '$/Products',
    '$',
    'Products#top',
  ]) {
    assert.throws(
      () => resolve(target),
      (e: unknown) => e instanceof ODataError && e.status === 400,
      target,
    );
  }
  assert.throws(() => resolve('/other.svc/Products'), /is not inside the service \/publicapi\/v1\/api\.svc/);
});
