/**
 * SQLite storage of Edm values: Int64 as INTEGER (read back as bigint), Decimal as INTEGER
 * millionths (exact, and comparable in SQL), Boolean as 0/1, DateTime as UTC milliseconds.
 */
import type { EdmType } from '../../model/types';
import { decimalToScaled, scaledToDecimal, type EdmValue } from '../../odata/edm';
import type { SqlValue, ValueCodec } from '../store';

const toBigInt = (raw: unknown): bigint => (typeof raw === 'bigint' ? raw : BigInt(raw as number));

export const sqliteCodec: ValueCodec = {
  encode(type: EdmType, value: EdmValue): SqlValue {
    if (value === null) return null;
    switch (type) {
      case 'Edm.Decimal':
        return decimalToScaled(value as string);
      case 'Edm.Boolean':
        return value ? 1 : 0;
      // better-sqlite3 binds every JavaScript number as REAL; an integer must be bound as an
      // integer, or `StockAmount div 3` divides as floating point.
      case 'Edm.Int32':
      case 'Edm.DateTime':
        return BigInt(value as number);
      default:
        return value as SqlValue;
    }
  },
  decode(type: EdmType, raw: unknown): EdmValue {
    if (raw === null || raw === undefined) return null;
    switch (type) {
      case 'Edm.Int64':
        return toBigInt(raw);
      case 'Edm.Int32':
      case 'Edm.DateTime':
        return Number(raw);
      case 'Edm.Decimal':
        return scaledToDecimal(toBigInt(raw));
      case 'Edm.Boolean':
        return Number(raw) !== 0;
      case 'Edm.String':
        return String(raw);
    }
  },
};
