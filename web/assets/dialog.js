// An in-page confirmation dialog in place of window.confirm(): a native modal <dialog>, so the
// browser keeps the focus inside it, Escape cancels and the page behind is inert. The question is its
// accessible description; the safe choice (Cancel) has the focus first, so a stray Enter does no harm.
import { h } from './dom.js';

let counter = 0;

/**
 * Asks a question and answers true when the person confirms. `danger` styles the confirm button as
 * destructive. The focus goes back where it was once the dialog closes.
 * @param {{ title: string, message: string, confirmLabel?: string, cancelLabel?: string, danger?: boolean }} question
 * @returns {Promise<boolean>}
 */
export function confirmDialog({ title, message, confirmLabel = 'OK', cancelLabel = 'Cancel', danger = false }) {
  const id = `dialog-${++counter}`;
  const returnFocus = document.activeElement;
  const cancel = h('button', { type: 'button', class: 'dialog-cancel', value: 'cancel' }, cancelLabel);
  const confirm = h('button', { type: 'button', class: ['dialog-confirm', danger ? 'danger-solid' : 'primary'], value: 'confirm' }, confirmLabel);
  const dialog = h(
    'dialog',
    { class: 'dialog', 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-message`, 'data-testid': 'confirm-dialog' },
    h('h2', { id: `${id}-title` }, title),
    h('p', { id: `${id}-message` }, message),
    h('div', { class: 'actions dialog-actions' }, cancel, confirm),
  );
  document.body.append(dialog);
  return new Promise((resolve) => {
    let answer = false;
    cancel.addEventListener('click', () => dialog.close());
    confirm.addEventListener('click', () => {
      answer = true;
      dialog.close();
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      if (returnFocus instanceof HTMLElement && returnFocus.isConnected) returnFocus.focus();
      resolve(answer);
    });
    dialog.showModal();
    cancel.focus();
  });
}
