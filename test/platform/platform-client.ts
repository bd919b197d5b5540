/**
 * The marketplace connector's side in tests: a live service with the platform API switched on,
 * deliveries over real HTTP, and documents shaped like the README's examples.
 */
import assert from 'node:assert/strict';
import { request, type HttpResponse } from '../support/http-client';
import { startLive, type LiveOptions, type LiveService } from '../support/live-service';

/** The platform credential the tests configure (PLATFORM_TOKEN). */
export const PLATFORM_TOKEN = 'test-platform-token-0123456789abcdef0123456789';
export const PLATFORM_AUTH = { Authorization: `Bearer ${PLATFORM_TOKEN}` };

export type Json = Record<string, unknown>;

export function startWithPlatform(options: LiveOptions = {}): Promise<LiveService> {
  return startLive({ ...options, env: { PLATFORM_TOKEN, ...(options.env ?? {}) } });
}

export function documentsUrl(live: LiveService, userName: string): string {
  return `${live.origin}/platform/v1/accounts/${encodeURIComponent(userName)}/documents`;
}

/** POSTs one document as the platform (any body: tests send broken ones too). */
export function postDocument(live: LiveService, userName: string, doc: unknown, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return request(documentsUrl(live, userName), {
    method: 'POST',
    headers: { ...PLATFORM_AUTH, 'Content-Type': 'application/json', ...headers },
    body: typeof doc === 'string' ? doc : JSON.stringify(doc),
  });
}

export interface Delivered {
  readonly kind: string;
  readonly key: string;
  readonly id: string;
  readonly outcome: 'created' | 'updated' | 'unchanged';
}

/** Delivers a document that must be accepted; its outcome. */
export async function deliver(live: LiveService, userName: string, doc: Json): Promise<Delivered> {
  const res = await postDocument(live, userName, doc);
  assert.equal(res.status, 200, `delivering ${String(doc.kind)}: ${res.body}`);
  return JSON.parse(res.body) as Delivered;
}

/** The platform's error message of a refused delivery. */
export function platformError(res: HttpResponse): string {
  assert.match(String(res.headers['content-type']), /^application\/json/);
  return (JSON.parse(res.body) as { error: { message: string } }).error.message;
}

/** An order with two items, a buyer and both addresses, as the README shows it. */
export function orderDocument(platformOrderId: string, items: Json[] = [orderItem(`${platformOrderId}-1`), orderItem(`${platformOrderId}-2`)], extra: Json = {}): Json {
  return {
    kind: 'order',
    PlatformOrderId: platformOrderId,
    CreationDate: '2024-05-01T09:12:00Z',
    CheckoutCompletionDate: '2024-05-01T09:15:30Z',
    CurrencyCode: 'EUR',
    ShippingService: 'DHL Paket',
    ShippingServiceCost: '4.90',
    CheckoutStatus: 2,
    PaymentOption: 'PayPal',
    BuyerCheckoutMessage: null,
    Buyer: { BuyerName: `buyer-of-${platformOrderId}`, Email: `${platformOrderId}@buyers.example.com` },
    Address: { Name: 'Erika', Surname: 'Mustermann', Street: 'Heidestraße 17', PostalCode: '51147', Town: 'Köln', Country: 'DE' },
    ShippingAddress: { Name: 'Erika', Surname: 'Mustermann', Company: 'Muster GmbH', Street: 'Am Hafen 3', PostalCode: '20457', Town: 'Hamburg', Country: 'DE' },
    SalesOrderItems: items,
    ...extra,
  };
}

export function orderItem(platformItemId: string, extra: Json = {}): Json {
  return { PlatformItemId: platformItemId, TransactionId: `tx-${platformItemId}`, Name: `Item ${platformItemId}`, Amount: 1, Price: '19.99', CurrencyCode: 'EUR', ...extra };
}

export const paymentEvent = (platformOrderId: string, paid = true, extra: Json = {}): Json => ({
  kind: 'payment',
  PlatformOrderId: platformOrderId,
  Paid: paid,
  PaymentTransactionId: `pay-${platformOrderId}`,
  ...extra,
});

export const shipmentEvent = (platformOrderId: string, extra: Json = {}): Json => ({ kind: 'shipment', PlatformOrderId: platformOrderId, ShippingStatus: 1, ...extra });
