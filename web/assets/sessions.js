// Active sessions (contract 14): one card listing sessions not ended, newest first, each with
// "End session". Shared by /Account/Sessions (the signed-in user's own, the current one marked) and
// the Users page (the selected user's, for an administrator).
import { api, problemLines } from './api.js';
import { confirmDialog } from './dialog.js';
import { clear, formatAgo, formatDate, h, notice, wrappingDate } from './dom.js';
import { describeUserAgent } from './user-agent.js';

/** @typedef {import('./api-types.js').SessionRow} SessionRow */

/**
 * The device in words ("Chrome 156 on Linux") with the user agent as sent one tap away: a
 * disclosure, not a hover tooltip, because a phone has no hover.
 * @param {string | null | undefined} agent
 * @param {{ testid?: string }} [options]
 */
export function deviceCell(agent, { testid } = {}) {
  const device = describeUserAgent(agent);
  if (!agent) return h('span', { class: 'device', 'data-testid': testid }, device);
  return h('details', { class: 'agent', 'data-testid': testid }, h('summary', { class: 'device' }, device), h('code', { class: 'agent-text' }, agent));
}

/**
 * When something was last seen or used, with how long ago: under it ("2026-11-25 14:19:32 EST" /
 * "3 min ago"), or `inline` after it ("… EST · 3 min ago").
 * @param {string | null | undefined} value
 * @param {string} [never]
 * @param {{ inline?: boolean }} [options]
 */
export function freshness(value, never = 'Never', { inline = false } = {}) {
  if (!value) return [never];
  return [wrappingDate(value), inline ? ' · ' : null, h('span', { class: inline ? 'ago-inline' : 'ago' }, formatAgo(value))];
}

/**
 * A card with the sessions read from `listPath`; each row ends through `DELETE endPath(id)`.
 * `own`: the caller's own sessions (the current one is marked, and ending it signs this browser out).
 * `onEndedCurrent` runs after the current session was ended (the cookies are gone by then).
 * @param {{ listPath: string, endPath: (id: string) => string, own?: boolean, title?: string, onEndedCurrent?: () => void }} options
 */
export function sessionsCard({ listPath, endPath, own = false, title = 'Sessions', onEndedCurrent }) {
  const messages = h('div', { class: 'messages', id: 'session-messages' });
  const holder = h('div', { class: 'table-holder' });
  const reload = h('button', { type: 'button', id: 'reload-sessions' }, 'Refresh');
  const card = h('section', { class: 'card', id: 'sessions' }, h('div', { class: 'card-head' }, h('h2', {}, title), reload), messages, holder);

  async function load() {
    try {
      const { json } = await api('GET', listPath);
      render(Array.isArray(json) ? json : []);
    } catch (error) {
      clear(holder).append(notice('error', problemLines(error)));
    }
  }

  /** @param {SessionRow} session @param {HTMLButtonElement} button */
  async function end(session, button) {
    const what = session.current ? 'this session (you will be signed out here)' : `the session started ${formatDate(session.createdDate)} from ${session.remoteIp ?? 'an unknown address'}`;
    const ok = await confirmDialog({
      title: session.current ? 'End this session?' : 'End that session?',
      message: `End ${what}? Anyone using it must sign in again.`,
      confirmLabel: 'End session',
      danger: true,
    });
    if (!ok) return;
    button.disabled = true;
    clear(messages);
    try {
      await api('DELETE', endPath(session.id), undefined, { on401: 'throw' });
      if (session.current) {
        onEndedCurrent?.();
        return;
      }
      messages.append(notice('success', 'The session has ended.'));
      await load();
    } catch (error) {
      button.disabled = false;
      messages.append(notice('error', problemLines(error)));
    }
  }

  /** @param {SessionRow[]} sessions */
  function render(sessions) {
    clear(holder).append(
      h(
        'table',
        { class: 'grid stackable', id: 'session-list' },
        h('thead', {}, h('tr', {}, ['Started', 'Address', 'Device', 'Action'].map((text) => h('th', { scope: 'col' }, text === 'Action' ? h('span', { class: 'visually-hidden' }, text) : text)))),
        h(
          'tbody',
          {},
          sessions.length === 0
            ? h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'No active sessions.'))
            : sessions.map((session) => {
                const button = h('button', { type: 'button', class: 'danger small end-session' }, 'End session');
                button.addEventListener('click', () => end(session, button));
                return h(
                  'tr',
                  { 'data-session-id': session.id, class: session.current ? 'current-session' : null },
                  // Last seen and the current mark sit under the start, so the row fits the Users page's narrower card.
                  h(
                    'td',
                    { class: 'nowrap', 'data-label': 'Started' },
                    formatDate(session.createdDate),
                    h('div', { class: 'muted small last-seen' }, 'Last seen ', freshness(session.lastSeenDate, 'not yet', { inline: true })),
                    session.current ? h('div', {}, h('span', { class: 'badge badge-good' }, 'This session')) : null,
                  ),
                  h('td', { class: 'nowrap', 'data-label': 'Address' }, session.remoteIp ?? ''),
                  // The scheme sits under the device, for the same reason.
                  h(
                    'td',
                    { class: 'session-device', 'data-label': 'Device' },
                    deviceCell(session.userAgent, { testid: 'session-device' }),
                    h('div', { class: 'muted small' }, session.authenticationType ?? ''),
                  ),
                  h('td', { 'data-label': '' }, button),
                );
              }),
        ),
      ),
    );
    holder.append(
      h('p', { class: 'hint', id: 'last-seen-note' }, 'Last seen is written at most once a minute, so a session in use can read up to a minute behind. Tap a device for the full text its browser sent.'),
    );
    card.dataset.loaded = 'true';
    card.dataset.count = String(sessions.length);
  }

  reload.addEventListener('click', () => {
    clear(messages);
    void load();
  });
  void load();
  if (own) card.append(h('p', { class: 'hint' }, 'Ending a session signs that browser or device out at once. Changing your password or signing out ends them all.'));
  return card;
}
