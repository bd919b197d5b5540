/**
 * Platform documents from a file (`catalogue platform import FILE --user NAME`): one JSON
 * document, a JSON array of documents, or NDJSON (one document per line, blank lines skipped).
 * Every document is validated before any is stored; then they are applied in order, as if each
 * had been delivered over the platform API, many to a transaction.
 */
import { ODataError } from '../odata/errors';
import { RuleViolation } from '../model/rule-violation';

/** The input's own fault, reported with where it is, rather than a fault of ours. */
const isInputError = (error: unknown): error is Error => error instanceof ODataError || error instanceof RuleViolation;
import type { PlatformDocument } from './documents';
import { DocumentFailure, type DeliveryOutcome, type PlatformIntake } from './intake';

/** Why a file could not be imported (printed as it is by the command). */
export class DocumentFileError extends Error {
  override readonly name = 'DocumentFileError';
}

export interface FileEntry {
  /** Where the document stands in the file, for messages: "document 3" or "line 7". */
  readonly where: string;
  readonly value: unknown;
}

/** The documents of a file's text, each with its place. */
export function readDocumentFile(text: string): FileEntry[] {
  let whole: unknown;
  try {
    whole = JSON.parse(text);
  } catch {
    // Not one JSON value: read it as NDJSON below.
    return readNdjson(text);
  }
  if (Array.isArray(whole)) return whole.map((value, i) => ({ where: `document ${i + 1}`, value }));
  return [{ where: 'the document', value: whole }];
}

function readNdjson(text: string): FileEntry[] {
  const entries: FileEntry[] = [];
  for (const [i, line] of text.split(/\r?\n/).entries()) {
    if (line.trim() === '') continue;
    try {
      entries.push({ where: `line ${i + 1}`, value: JSON.parse(line) });
    } catch (error) {
      throw new DocumentFileError(`line ${i + 1} is not valid JSON (${(error as Error).message}); a file holds one JSON document, a JSON array of them, or one per line (NDJSON).`);
    }
  }
  if (entries.length === 0) throw new DocumentFileError('the file holds no document.');
  return entries;
}

const MAX_REPORTED_PROBLEMS = 20;

/**
 * Documents applied in one transaction: one COMMIT (one fsync) for all of them instead of one
 * each, while one transaction holds the account's writer for a bounded time.
 */
const DOCUMENTS_PER_TRANSACTION = 200;

/**
 * Validates every document, then applies them in order, DOCUMENTS_PER_TRANSACTION to a
 * transaction; the outcome of each. An invalid document stores nothing of the file. A document that fails when applied (a
 * product reference that names nothing) stops the import there: the documents before it stay
 * stored, and importing the file again once it is mended changes nothing of them.
 */
export async function importDocuments(intake: PlatformIntake, accountId: number, entries: readonly FileEntry[]): Promise<DeliveryOutcome[]> {
  const documents: PlatformDocument[] = [];
  const problems: string[] = [];
  for (const entry of entries) {
    try {
      documents.push(intake.validate(entry.value));
    } catch (error) {
      if (!isInputError(error)) throw error;
      problems.push(`${entry.where}: ${error.message}`);
    }
  }
  if (problems.length > 0) {
    const shown = problems.slice(0, MAX_REPORTED_PROBLEMS).join('\n  ');
    const more = problems.length > MAX_REPORTED_PROBLEMS ? `\n  … and ${problems.length - MAX_REPORTED_PROBLEMS} more` : '';
    throw new DocumentFileError(`nothing was imported: ${problems.length} of ${entries.length} documents are invalid:\n  ${shown}${more}`);
  }
  const outcomes: DeliveryOutcome[] = [];
  for (let start = 0; start < documents.length; start += DOCUMENTS_PER_TRANSACTION) {
    const chunk = documents.slice(start, start + DOCUMENTS_PER_TRANSACTION);
    try {
      outcomes.push(...(await intake.applyAll(accountId, chunk)));
    } catch (error) {
      if (!(error instanceof DocumentFailure)) throw error;
      // The failed transaction took the documents before the failing one with it: they go in
      // again on their own, so that the import stops exactly at the failing document.
      if (error.index > 0) outcomes.push(...(await intake.applyAll(accountId, chunk.slice(0, error.index))));
      const i = start + error.index;
      if (!isInputError(error.cause)) throw error.cause;
      throw new DocumentFileError(`${entries[i]!.where}: ${error.cause.message} The ${i} documents before it were imported; importing them again changes nothing.`);
    }
  }
  return outcomes;
}
