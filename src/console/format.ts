/** How the console writes values for people: dates in UTC, money with two decimals, flags as words. */
import type { EdmValue } from '../odata/edm';

export function dateTime(value: EdmValue | undefined): string {
  if (typeof value !== 'number') return '—';
  return new Date(value).toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
}

export function date(value: EdmValue | undefined): string {
  return typeof value === 'number' ? new Date(value).toISOString().slice(0, 10) : '—';
}

/** A decimal string (as the model holds it) with at least two decimals, and its currency. */
export function money(value: EdmValue | undefined, currency?: EdmValue): string {
  if (typeof value !== 'string') return '—';
  const [whole, fraction = ''] = value.split('.');
  const shown = `${whole}.${fraction.padEnd(2, '0')}`;
  return typeof currency === 'string' && currency ? `${shown} ${currency}` : shown;
}

export function text(value: EdmValue | undefined): string {
  if (value === null || value === undefined || value === '') return '—';
  return String(value);
}

export function yesNo(value: EdmValue | undefined): string {
  return value === true ? 'yes' : value === false ? 'no' : '—';
}

/** Only web addresses become links: a javascript: or data: URL stays text. */
export function isWebAddress(value: EdmValue | undefined): value is string {
  return typeof value === 'string' && /^https?:\/\/[^\s]+$/i.test(value);
}

/** The last segment of a URL's path (what names a picture), or the whole text. */
export function fileName(url: string): string {
  try {
    const segment = new URL(url).pathname.split('/').filter(Boolean).pop();
    return segment ? decodeURIComponent(segment) : url;
  } catch {
    return url;
  }
}
