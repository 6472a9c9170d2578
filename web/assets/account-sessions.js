// /Account/Sessions: where the signed-in user is signed in, each session with "End session"; the
// current one is marked, and ending it signs this browser out.
import { h, notice } from './dom.js';
import { content, showSignedOut, startPage } from './layout.js';
import { sessionsCard } from './sessions.js';

await startPage();
const root = content();
root.append(
  sessionsCard({
    listPath: '/api/Authentication/Sessions',
    endPath: (/** @type {string} */ id) => `/api/Authentication/Sessions/${encodeURIComponent(id)}`,
    own: true,
    title: 'Your sessions',
    onEndedCurrent: () => {
      showSignedOut();
      root.replaceChildren(
        h(
          'section',
          { class: 'card narrow' },
          notice('success', 'This session has ended: this browser is signed out.', { testid: 'session-ended' }),
          h('div', { class: 'actions' }, h('a', { class: 'button primary', href: '/Account/Login' }, 'Sign in again')),
        ),
      );
    },
  }),
);
root.dataset.ready = 'true';
document.body.dataset.ready = 'true';
