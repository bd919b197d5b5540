/**
 * SQLite storage of Edm values: Int64 as INTEGER (read back as bigint), Decimal as INTEGER
 * millionths (exact, and comparable in SQL), Boolean as 0/1, DateTime as UTC milliseconds.
 */
import type { EdmType } from '../../model/types';
import { decimalToScaled, scaledToDecimal, type EdmValue } from '../../odata/edm';
import type { SqlValue, ValueCodec } from '../store';

const toBigInt = (raw: unknown): bigint => (typeof raw === 'bigint' ? raw : BigInt(raw as number));

const isAbsent = (raw: unknown): raw is null | undefined => raw === null || raw === undefined;

const DECODERS: Readonly<Record<EdmType, (raw: unknown) => EdmValue>> = {
  'Edm.Int64': (raw) => (isAbsent(raw) ? null : toBigInt(raw)),
  'Edm.Int32': (raw) => (isAbsent(raw) ? null : Number(raw)),
  'Edm.DateTime': (raw) => (isAbsent(raw) ? null : Number(raw)),
  'Edm.Decimal': (raw) => (isAbsent(raw) ? null : scaledToDecimal(toBigInt(raw))),
  'Edm.Boolean': (raw) => (isAbsent(raw) ? null : Number(raw) !== 0),
  'Edm.String': (raw) => (isAbsent(raw) ? null : String(raw)),
};

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
    return DECODERS[type](raw);
  },
  decoderOf(type: EdmType): (raw: unknown) => EdmValue {
    return DECODERS[type];
  },
};
