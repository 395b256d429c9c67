import type { Locale } from '../website/index.ts';
import type { PageCopy } from './copy.ts';
import { type Html, html, jsonData } from './html.ts';

/** Which top-level section a page belongs to (marks the current nav link). */
export type Section = 'home' | 'marketplace' | 'packages' | 'assistant' | 'receipts' | 'account';

const SECTIONS: { id: Section; path: string }[] = [
  { id: 'home', path: '/' },
  { id: 'marketplace', path: '/marketplace' },
  { id: 'packages', path: '/packages' },
  { id: 'assistant', path: '/assistant' },
  { id: 'receipts', path: '/receipts' },
  { id: 'account', path: '/account' },
];

const LANGUAGES: { locale: Locale; label: string }[] = [
  { locale: 'en', label: 'English' },
  { locale: 'zh-CN', label: '简体中文' },
];

/** What a page hands to the layout. */
export interface PageSpec {
  locale: Locale;
  copy: PageCopy;
  /** The nav link marked current; none on pages outside the sections (e.g. not found). */
  section?: Section;
  title: string;
  /** Current path and query without `locale` (the language switch links back to it). */
  path: string;
  body: Html;
  /** Page script under /assets (module); none for pages that work without one. */
  script?: string;
  /** Strings and settings the page script reads from the `page-data` JSON block. */
  data?: unknown;
}

/**
 * `input` (a request URL or a path) parsed as a path and query on this site, never another origin:
 * leading slashes and backslashes (which URL parsing reads as slashes) collapse to one before and
 * after parsing (`/.//host` parses to `//host`); input that does not parse is `/`.
 */
export function siteUrl(input: string): URL {
  let url: URL;
  try {
    url = new URL(`/${input.replace(/^[/\\]+/, '')}`, 'http://x');
  } catch {
    url = new URL('/', 'http://x');
  }
  url.pathname = url.pathname.replace(/^\/+/, '/');
  return url;
}

function switchHref(path: string, locale: Locale): string {
  const url = siteUrl(path);
  url.searchParams.set('locale', locale);
  return `${url.pathname}${url.search}`;
}

/**
 * The document around every page: skip link, banner with the main navigation and the language
 * switch, the main landmark, a footer. Scripts are same-origin modules (the CSP forbids inline
 * script); page strings travel in a JSON data block.
 */
export function layout(spec: PageSpec): Html {
  const { copy, locale } = spec;
  const site = copy.site;
  return html`<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${spec.title} · ${site.name}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/assets/site.css">
${spec.script ? html`<script type="module" src="/assets/${spec.script}"></script>` : ''}
</head>
<body>
<a class="skip" href="#main">${site.skip}</a>
<header class="banner">
  <div class="wrap banner-row">
    <a class="brand" href="/"><span aria-hidden="true">◆</span> ${site.name}</a>
    <nav aria-label="${site.nav}">
      <ul class="nav">
        ${SECTIONS.map(
          (s) =>
            html`<li><a href="${s.path}"${s.id === spec.section ? html` aria-current="page"` : ''}>${site[s.id]}</a></li>`,
        )}
      </ul>
    </nav>
    <nav class="lang" aria-label="${site.language}">
      <ul>
        ${LANGUAGES.map(
          (l) =>
            html`<li><a href="${switchHref(spec.path, l.locale)}" lang="${l.locale}" hreflang="${l.locale}"${l.locale === locale ? html` aria-current="true"` : ''}>${l.label}</a></li>`,
        )}
      </ul>
    </nav>
  </div>
</header>
<main id="main" tabindex="-1" class="wrap">
${spec.body}
</main>
<footer class="footer">
  <div class="wrap"><p>${site.footer} <a href="/openapi.json">${site.api}</a></p></div>
</footer>
<script type="application/json" id="page-data">${jsonData({ locale, form: { required: copy.site.fieldRequired, email: copy.site.emailInvalid, invalid: copy.site.fieldInvalid }, ...(spec.data as object | undefined) })}</script>
</body>
</html>
`;
}
