/** The console's template helper: every interpolated value is escaped unless it is markup made by `html`. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, html, Html } from '../../src/console/html';
import { fileName, isWebAddress } from '../../src/console/format';

test('text is escaped in content and in quoted attributes; html fragments are kept; lists joined; null and false are nothing', () => {
  const title = `<script>alert(1)</script>"onmouseover='x'\`&`;
  assert.equal(
    html`<a title="${title}">${title}</a>`.toString(),
    '<a title="&lt;script&gt;alert(1)&lt;/script&gt;&quot;onmouseover=&#39;x&#39;&#96;&amp;">&lt;script&gt;alert(1)&lt;/script&gt;&quot;onmouseover=&#39;x&#39;&#96;&amp;</a>',
  );
  assert.equal(html`<ul>${['a<', 'b>'].map((x) => html`<li>${x}</li>`)}</ul>`.toString(), '<ul><li>a&lt;</li><li>b&gt;</li></ul>');
  assert.equal(html`${null}${undefined}${false}${0}${12n}`.toString(), '012');
  assert.equal(html`${Html.trusted('<br>')}`.toString(), '<br>');
  assert.equal(escapeHtml('&amp;'), '&amp;amp;', 'escaping is not undone for text that looks escaped');
});

test('only http and https addresses are links; a picture is named by its file', () => {
  assert.equal(isWebAddress('https://img.example/a.jpg'), true);
  assert.equal(isWebAddress('HTTP://img.example/a.jpg'), true);
  for (const bad of ['javascript:alert(1)', 'data:text/html,x', ' https://x', 'https://a b', null, 3]) assert.equal(isWebAddress(bad as never), false, String(bad));
  assert.equal(fileName('https://img.example/demo/a%20b.jpg?x=1'), 'a b.jpg');
  assert.equal(fileName('not a url'), 'not a url');
});
