// /Account/ChangePassword: the signed-in user's own password, with the same transport rules as sign-in.
import { api, ApiError, problemLines } from './api.js';
import { clear, field, h, notice } from './dom.js';
import { content, startPage } from './layout.js';
import { brokenRules, passwordProtector, rulesChecklist } from './password.js';

const session = await startPage();
const root = content();
const messages = h('div', { class: 'messages' });
const current = h('input', { name: 'password', type: 'password', autocomplete: 'current-password' });
const next = h('input', { name: 'newPassword', type: 'password', autocomplete: 'new-password' });
const repeat = h('input', { name: 'repeatNewPassword', type: 'password', autocomplete: 'new-password' });
const submit = h('button', { type: 'submit', class: 'primary' }, 'Change password');
const form = h(
  'form',
  { class: 'card narrow', novalidate: true, id: 'change-password-form' },
  messages,
  field('Current password', current),
  field('New password', next),
  field('Repeat new password', repeat),
  rulesChecklist(next),
  h('p', { class: 'hint' }, 'Changing the password signs out every other session of your account.'),
  h('div', { class: 'actions' }, submit),
);
root.append(form);

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const problems = [];
  if (!current.value) problems.push('Enter your current password.');
  problems.push(...brokenRules(next.value));
  if (next.value !== repeat.value) problems.push('The new passwords do not match.');
  if (problems.length > 0) return clear(messages).append(notice('error', problems));
  submit.disabled = true;
  try {
    const protector = await passwordProtector(session.userName);
    await api(
      'POST',
      '/api/Authentication/ChangePassword',
      {
        password: await protector.protect(current.value),
        newPassword: await protector.protect(next.value),
        repeatNewPassword: await protector.protect(repeat.value),
      },
      { on401: 'throw' },
    );
    form.reset();
    clear(messages).append(notice('success', 'Your password has been changed. Your other sessions have been signed out.', { testid: 'password-changed' }));
  } catch (error) {
    const lines = error instanceof ApiError && error.status === 401 ? ['The current password is not right.'] : problemLines(error);
    clear(messages).append(notice('error', lines));
  } finally {
    submit.disabled = false;
  }
});
document.body.dataset.ready = 'true';
