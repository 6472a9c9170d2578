// Shown with a 403 when a signed-in user opens a page their account may not use.
import { h, notice } from './dom.js';
import { content, startPage } from './layout.js';

await startPage({ session: 'optional' });
content().append(
  notice('warning', 'Your account does not have access to this page.', { testid: 'forbidden' }),
  h('p', {}, h('a', { href: '/' }, 'Back to the home page')),
);
document.body.dataset.ready = 'true';
