import type { Response } from 'express';
import type { PageDefinition } from './pages';

/**
 * The policy of every page: scripts and styles only from this origin (no inline code at all, so an
 * injected `<script>` or `onerror=` cannot run), no framing, no plug-ins, forms and fetches to this
 * origin only.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers every page and asset carries. */
export function setSecurityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Escapes text for HTML content and quoted attributes. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/**
 * The HTML shell of a page. It holds only constants of the page catalogue (escaped all the same);
 * everything about users or rows is fetched by the page's script and written with textContent.
 */
export function pageShell(page: PageDefinition, options: { status?: 'forbidden' } = {}): string {
  const title = escapeHtml(page.title);
  const script = options.status === 'forbidden' ? 'forbidden.js' : page.script;
  const grid = page.grid ? ` data-grid="${escapeHtml(page.grid)}"` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Transaction Monitoring</title>
<link rel="icon" href="/assets/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/app.css">
<script type="module" src="/assets/${escapeHtml(script)}"></script>
</head>
<body data-page="${escapeHtml(page.path)}"${grid}>
<a class="skip-link" href="#main">Skip to main content</a>
<header class="topbar">
<a class="brand" href="/"><span class="brand-mark" aria-hidden="true"></span><span class="brand-text">Transaction Monitoring</span></a>
<div id="session" class="session"></div>
</header>
<div class="layout">
<nav id="nav" class="sidebar" aria-label="Main"></nav>
<main id="main" class="main" tabindex="-1">
<h1 id="title">${title}</h1>
<div id="content" class="content"><noscript>This page needs JavaScript.</noscript></div>
</main>
</div>
</body>
</html>
`;
}
