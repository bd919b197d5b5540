/**
 * The console's one way of writing HTML: a tagged template that escapes every interpolated value
 * unless it is already Html (the result of another `html` template). Nothing the database holds
 * can reach a page without passing through escapeHtml, so a title like `<script>` or
 * `"onmouseover=` is shown as text, in element content and in quoted attribute values alike.
 */

/** Markup that is already safe: made only by `html` (or `Html.trusted` for constant text). */
export class Html {
  private constructor(readonly text: string) {}

  /** For markup the code itself spells out (never for data). */
  static trusted(text: string): Html {
    return new Html(text);
  }

  toString(): string {
    return this.text;
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

/** What a template may interpolate: text is escaped, Html kept, lists joined, nothing for null/false. */
export type Interpolation = Html | string | number | bigint | boolean | null | undefined | readonly Interpolation[];

function render(value: Interpolation): string {
  if (value instanceof Html) return value.text;
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: Interpolation[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return Html.trusted(out);
}
