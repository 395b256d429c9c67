import type { PageCopy } from './copy.ts';
import { type Html, html } from './html.ts';

/**
 * Packages: the healthy sources list and one package (filled by packages.js from
 * `/share/v1/agpk/sources` and `/api/agpk/sources`), the registration form and the publishing
 * guide (static).
 */
export function packagesBody(copy: PageCopy, packageId: string | undefined): Html {
  const p = copy.packages;
  if (packageId !== undefined) {
    return html`
<p><a href="/packages">← ${p.back}</a></p>
<h1 id="package-title">${packageId}</h1>
<noscript><p class="notice">${copy.site.noscript}</p></noscript>
<div id="package-detail" data-package-id="${packageId}" aria-live="polite"></div>
`;
  }
  return html`
<h1>${p.title}</h1>
<p class="lead">${p.lead}</p>
<noscript><p class="notice">${copy.site.noscript}</p></noscript>
<section aria-labelledby="sources-title">
  <h2 id="sources-title">${p.healthy}</h2>
  <div id="sources" aria-live="polite"></div>
</section>
<section class="card" aria-labelledby="register-title">
  <h2 id="register-title">${p.registerTitle}</h2>
  <p id="register-intro">${p.registerIntro}</p>
  <form id="source-form" novalidate>
    <div class="field"><label for="s-package_id">${p.fPackageId}</label><input id="s-package_id" name="package_id" required maxlength="128" aria-describedby="s-package_id-error"><p id="s-package_id-error" class="field-error" hidden></p></div>
    <div class="field"><label for="s-name">${p.fName}</label><input id="s-name" name="name" required maxlength="200" aria-describedby="s-name-error"><p id="s-name-error" class="field-error" hidden></p></div>
    <div class="field"><label for="s-version">${p.fVersion}</label><input id="s-version" name="version" required maxlength="64" aria-describedby="s-version-error"><p id="s-version-error" class="field-error" hidden></p></div>
    <div class="field"><label for="s-vendor_name">${p.fVendor}</label><input id="s-vendor_name" name="vendor_name" required maxlength="200" aria-describedby="s-vendor_name-error"><p id="s-vendor_name-error" class="field-error" hidden></p></div>
    <div class="field wide"><label for="s-download_uri">${p.fUri}</label><input id="s-download_uri" name="download_uri" type="url" required maxlength="2048" aria-describedby="s-download_uri-error"><p id="s-download_uri-error" class="field-error" hidden></p></div>
    <div class="field wide"><label for="s-sha256">${p.fSha}</label><input id="s-sha256" name="sha256" required pattern="[0-9a-fA-F]{64}" aria-describedby="s-sha256-error" autocomplete="off"><p id="s-sha256-error" class="field-error" hidden></p></div>
    <div class="field wide"><label for="s-summary">${p.fSummary}</label><textarea id="s-summary" name="summary" rows="2" maxlength="2000"></textarea></div>
    <button type="submit">${p.submit}</button>
  </form>
  <div id="source-result" class="result" role="status" aria-live="polite"></div>
</section>
<section aria-labelledby="guide-title">
  <h2 id="guide-title">${p.guideTitle}</h2>
  <ol class="guide">${p.guide.map((step) => html`<li><code>${step}</code></li>`)}</ol>
</section>
`;
}
