// /Account/Logout: a GET shows a confirmation button; only the button's POST signs out.
import { api, problemLines } from './api.js';
import { clear, h, notice } from './dom.js';
import { content, showSignedOut, startPage } from './layout.js';

const session = await startPage({ session: 'optional' });
const root = content();
const card = h('section', { class: 'card narrow' });
root.append(card);

const button = h('button', { type: 'button', class: 'primary', id: 'confirm-logout' }, 'Sign out');
card.append(
  h('p', {}, session ? `You are signed in as ${session.userName}. Do you want to sign out?` : 'Do you want to sign out of this browser?'),
  session
    ? h(
        'p',
        { class: 'hint', id: 'logout-scope' },
        'Signing out ends every session of your account, not only this one: other browsers and devices where you are signed in will have to sign in again. API keys keep working.',
      )
    : '', // not null: the DOM's append() writes null as the text "null"
  h('div', { class: 'actions' }, button, session ? h('a', { class: 'button', href: '/' }, 'Cancel') : null),
);

button.addEventListener('click', async () => {
  button.disabled = true;
  try {
    const res = await api('POST', '/api/Authentication/Logout', undefined, { on401: 'throw' });
    showSignedOut();
    const failed = Boolean(res.headers.get('X-Service-Logout-Warning'));
    clear(card).append(
      notice('success', failed ? 'You have been signed out in this browser.' : 'You have been signed out. Every session of your account has ended.', { testid: 'logged-out' }),
    );
    if (failed) {
      card.append(
        notice(
          'warning',
          'This browser is signed out, but the service could not record the end of the session. ' +
            'Until it expires (within 15 minutes) the session could still be used by someone holding its token. ' +
            'If this computer is shared, close the browser.',
          { testid: 'logout-warning' },
        ),
      );
    }
    card.append(h('div', { class: 'actions' }, h('a', { class: 'button primary', href: '/Account/Login' }, 'Sign in again')));
  } catch (error) {
    button.disabled = false;
    card.append(notice('error', problemLines(error)));
  }
});
document.body.dataset.ready = 'true';
