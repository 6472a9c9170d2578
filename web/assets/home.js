// The landing page: a short welcome and the areas this user may open.
import { h } from './dom.js';
import { allowedMenu, content, startPage } from './layout.js';

const session = await startPage();
const root = content();
root.append(h('p', { class: 'lead' }, `Welcome, ${session.userName}.`));
const groups = allowedMenu(session).filter((g) => g.section && g.section !== 'Account');
if (groups.length === 0) {
  root.append(h('p', { class: 'muted' }, 'Your account has no administration rights. Ask an administrator if you need access.'));
}
root.append(
  h(
    'div',
    { class: 'tiles' },
    groups.map((group) =>
      h('section', { class: 'card tile' }, h('h2', {}, group.section), h('ul', { class: 'links' }, group.items.map((item) => h('li', {}, h('a', { href: item.path }, item.label))))),
    ),
    h(
      'section',
      { class: 'card tile' },
      h('h2', {}, 'Your account'),
      h(
        'ul',
        { class: 'links' },
        h('li', {}, h('a', { href: '/Account/Sessions' }, 'Your sessions')),
        h('li', {}, h('a', { href: '/Account/ChangePassword' }, 'Change password')),
        h('li', {}, h('a', { href: '/swagger/index.html' }, 'API explorer')),
        h('li', {}, h('a', { href: '/Account/Logout' }, 'Sign out')),
      ),
    ),
  ),
);
document.body.dataset.ready = 'true';
