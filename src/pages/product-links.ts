/**
 * Where each home-page product card's call to action leads, by the product's id in
 * config/content: a page of the site, or a document it serves. The cards' words stay in the
 * content files; the targets are routes, the same in every language.
 */
export const PRODUCT_LINKS: Readonly<Record<string, string>> = {
  // An agent is connected with its token, made on Account (which signs the visitor in first).
  gateway: '/account#agents-title',
  marketplace: '/marketplace#list-title',
  identity: '/account#agents-title',
  receipts: '/receipts',
  agpk: '/agpk/v1/builder-standard.md',
  sources: '/packages#register-title',
  // The assistant takes a guest token for the visitor and uses it.
  'token-api': '/assistant',
};
