import { REQUEST_ASSET_INTEGRITY } from './request-assets';

/** Where the make page's script puts the request link into the snippet. */
export const EMBED_SNIPPET_PLACEHOLDER = '{request}';

/**
 * What a site pastes to embed a request's form (DECISIONS 15): a slot naming the request link, and the embed
 * script with its Subresource Integrity hash (so a changed script is refused by the hosting page's browser).
 */
export function embedSnippet(publicBaseUrl: string, requestUrl: string): string {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return `<div data-vanish-request="${requestUrl}"></div>\n<script src="${base}/assets/embed.js" integrity="${REQUEST_ASSET_INTEGRITY.embed}" crossorigin="anonymous" async></script>`;
}
