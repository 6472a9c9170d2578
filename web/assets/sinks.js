// Administration > Security > Sinks (landlord administrators, contract 19): every SIEM sink with its
// delivery state at a glance (delivering, behind by N leaves and T seconds, failing since, last
// error), and create, edit, test, replay, pause. A secret is set, never shown: the API never serves it.
import { api, problemLines } from './api.js';
import { confirmDialog } from './dialog.js';
import { clear, field, focusOn, formatDate, formatNumber, h, notice } from './dom.js';
import { content, startPage } from './layout.js';

await startPage();
const root = content();

const listMessages = h('div', { class: 'messages' });
const listHolder = h('div', { class: 'table-holder' });
const detail = h('div', { class: 'sink-detail', id: 'sink-detail' });
root.append(
  h(
    'div',
    { class: 'users-layout' },
    h(
      'section',
      { class: 'card' },
      h('div', { class: 'card-head' }, h('h2', {}, 'Sinks'), h('button', { type: 'button', class: 'primary', id: 'new-sink', onclick: () => showForm(null) }, 'New sink')),
      h('p', { class: 'hint' }, 'Every sealed leaf of the audit log goes to each active sink, in order, with what proves it (its leaf and the signed checkpoint that covers it).'),
      listMessages,
      listHolder,
    ),
    detail,
  ),
);

/** @type {any[]} */
let sinks = [];
/** @type {number | null} */
let selectedId = null;

const STATE = {
  delivering: ['badge-good', 'Delivering'],
  behind: ['badge-warn', 'Catching up'],
  failing: ['badge-bad', 'Failing'],
  paused: ['badge-muted', 'Paused'],
};

/** @param {number} value */
function seconds(value) {
  if (value < 120) return `${formatNumber(value)} s`;
  if (value < 7200) return `${formatNumber(Math.floor(value / 60))} min`;
  return `${formatNumber(Math.floor(value / 3600))} h ${Math.floor((value % 3600) / 60)} min`;
}

/** @param {any} sink */
function badge(sink) {
  const [kind, label] = STATE[/** @type {keyof typeof STATE} */ (sink.state)] ?? ['badge-muted', sink.state];
  return h('span', { class: ['badge', kind], 'data-testid': 'sink-state' }, label);
}

/** @param {any} sink */
function behind(sink) {
  return sink.behindLeaves === 0 ? 'up to date' : `${formatNumber(sink.behindLeaves)} leaves, ${seconds(sink.behindSeconds)}`;
}

async function load() {
  try {
    sinks = (await api('GET', '/api/SecuritySink')).json;
    clear(listMessages);
  } catch (error) {
    sinks = [];
    clear(listMessages).append(notice('error', problemLines(error)));
  }
  renderList();
}

function renderList() {
  clear(listHolder).append(
    h(
      'table',
      { class: 'grid selectable', id: 'sinks' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Behind'))),
      h(
        'tbody',
        {},
        sinks.length === 0
          ? h('tr', {}, h('td', { colspan: 4, class: 'empty' }, 'No sinks: security events stay in this service only.'))
          : sinks.map((sink) =>
              h(
                'tr',
                { class: sink.id === selectedId ? 'selected' : null, 'data-sink': sink.name, onclick: () => select(sink.id) },
                h('td', {}, sink.name),
                h('td', {}, `${sink.type} · ${sink.format === 'cef' ? 'CEF' : 'OCSF'}`),
                h('td', {}, badge(sink)),
                h('td', {}, behind(sink)),
              ),
            ),
      ),
    ),
  );
}

/**
 * Runs an action with its button disabled; its problem, if any, shows in `messages`.
 * @param {HTMLButtonElement} button @param {HTMLElement} messages @param {() => Promise<any>} action
 */
async function act(button, messages, action) {
  button.disabled = true;
  clear(messages);
  try {
    return await action();
  } catch (error) {
    messages.append(notice('error', problemLines(error)));
    focusOn(/** @type {HTMLElement} */ (messages.firstChild));
    return null;
  } finally {
    button.disabled = false;
  }
}

/** Headers as the text area holds them: one `Name: value` a line. @param {Record<string, string> | null} headers */
const headersText = (headers) => Object.entries(headers ?? {}).map(([k, v]) => `${k}: ${v}`).join('\n');
/** @param {string} text */
function parseHeaders(text) {
  /** @type {Record<string, string>} */
  const headers = {};
  for (const line of text.split('\n').map((l) => l.trim()).filter(Boolean)) {
    const colon = line.indexOf(':');
    headers[colon < 0 ? line : line.slice(0, colon).trim()] = colon < 0 ? '' : line.slice(colon + 1).trim();
  }
  return headers;
}

/** The create form (sink null) or the edit form with the sink's state and actions. @param {any} sink @param {string} [message] */
function showForm(sink, message) {
  selectedId = sink?.id ?? null;
  renderList();
  const messages = h('div', { class: 'messages', id: 'sink-messages' });
  if (message) messages.append(notice('success', message));
  const name = h('input', { id: 'sink-name', maxlength: 64, value: sink?.name ?? '', autocomplete: 'off' });
  const type = h('select', { id: 'sink-type' }, h('option', { value: 'webhook' }, 'Webhook (HTTPS POST, HMAC-signed)'), h('option', { value: 'syslog' }, 'Syslog (RFC 5424 over TCP or TLS)'));
  type.value = sink?.type ?? 'webhook';
  const url = h('input', { id: 'sink-url', maxlength: 512, value: sink?.url ?? '', autocomplete: 'off', placeholder: 'https://siem.example/hook or syslog+tls://siem.example:6514' });
  const format = h('select', { id: 'sink-format' }, h('option', { value: 'ocsf' }, 'OCSF 1.3 JSON'), h('option', { value: 'cef' }, 'CEF (syslog only)'));
  format.value = sink?.format ?? 'ocsf';
  const secret = h('input', { id: 'sink-secret', type: 'password', autocomplete: 'new-password', placeholder: sink?.secretSet ? 'set — leave empty to keep it' : '' });
  const headers = h('textarea', { id: 'sink-headers', rows: 3, placeholder: 'Authorization: Splunk <token>' });
  headers.value = headersText(sink?.headers ?? null);
  const active = h('input', { type: 'checkbox', id: 'sink-active', checked: sink ? sink.active : true });
  const save = h('button', { type: 'submit', class: 'primary', id: 'save-sink' }, sink ? 'Save' : 'Create sink');
  const form = h(
    'form',
    { class: 'card', novalidate: true },
    h('div', { class: 'card-head' }, h('h2', { id: 'sink-title', tabindex: '-1' }, sink ? sink.name : 'New sink'), sink ? badge(sink) : null),
    messages,
    sink ? stateFacts(sink) : null,
    field('Name', name),
    field('Type', type),
    field('URL', url, 'A webhook takes https:// (http:// only to this machine); syslog takes syslog://host:port or syslog+tls://host:port.'),
    field('Format', format),
    field('Secret', secret, sink?.secretSet ? 'A secret is set. It is never shown; type a new one to replace it.' : 'Webhook: the HMAC signing key (at least 16 characters). Syslog over TLS: the client key in PEM, then its certificate.'),
    field('Headers (webhook)', headers, 'One "Name: value" a line. Values are never shown again: **** keeps the value set.'),
    h('label', { class: 'check' }, active, ' Active (unticked: paused, nothing is sent and the cursor waits)'),
    h('div', { class: 'actions' }, save, sink ? actions(sink, messages) : h('button', { type: 'button', onclick: () => placeholder() }, 'Cancel')),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    /** @type {Record<string, unknown>} */
    const body = { name: name.value.trim(), type: type.value, url: url.value.trim(), format: format.value, active: active.checked };
    if (secret.value) body.secret = secret.value;
    if (type.value === 'webhook') body.headers = parseHeaders(headers.value);
    const saved = await act(save, messages, async () => (await api(sink ? 'PUT' : 'POST', sink ? `/api/SecuritySink/${sink.id}` : '/api/SecuritySink', body)).json);
    if (saved) {
      await load();
      select(saved.id, sink ? 'Saved.' : `Sink ${saved.name} created.`);
    }
  });
  clear(detail).append(form);
  focusOn(message ? /** @type {HTMLElement} */ (messages.firstChild) : name);
}

/** @param {any} sink */
function stateFacts(sink) {
  /** @type {Array<[string, any, string]>} */
  const rows = [
    ['Next leaf', formatNumber(sink.nextLeafIndex), 'sink-next'],
    ['Behind', behind(sink), 'sink-behind'],
    ['Last delivered', sink.lastDeliveredDate ? formatDate(sink.lastDeliveredDate) : 'never', 'sink-delivered'],
  ];
  if (sink.failingSince) rows.push(['Failing since', formatDate(sink.failingSince), 'sink-failing']);
  if (sink.lastError) rows.push(['Last error', h('code', { class: 'mono' }, sink.lastError), 'sink-error']);
  // Each label with its value in one cell of the grid (a <div> inside <dl> groups a pair).
  return h('dl', { class: 'facts' }, rows.map(([label, value, testid]) => h('div', {}, h('dt', {}, label), h('dd', { 'data-testid': testid }, value))));
}

/** Test, pause or resume, replay, delete. @param {any} sink @param {HTMLElement} messages */
function actions(sink, messages) {
  const test = h('button', { type: 'button', id: 'test-sink' }, 'Send a test event');
  test.addEventListener('click', async () => {
    const reply = await act(test, messages, async () => (await api('POST', `/api/SecuritySink/${sink.id}/Test`)).json);
    if (reply) messages.append(notice(reply.delivered ? 'success' : 'error', `${reply.delivered ? 'Delivered' : 'Not delivered'}${reply.status ? ` (HTTP ${reply.status})` : ''}: ${reply.detail || 'no answer body'}`, { testid: 'test-reply' }));
  });
  const pause = h('button', { type: 'button', id: 'pause-sink' }, sink.active ? 'Pause' : 'Resume');
  pause.addEventListener('click', async () => {
    const body = { name: sink.name, type: sink.type, url: sink.url, format: sink.format, active: !sink.active, ...(sink.type === 'webhook' ? { headers: sink.headers ?? {} } : {}) };
    const saved = await act(pause, messages, async () => (await api('PUT', `/api/SecuritySink/${sink.id}`, body)).json);
    if (saved) {
      await load();
      select(saved.id, saved.active ? 'Resumed: the backlog flows.' : 'Paused.');
    }
  });
  const from = h('input', { id: 'replay-from', type: 'number', min: 0, max: sink.nextLeafIndex, value: 0, class: 'narrow' });
  const replay = h('button', { type: 'button', id: 'replay-sink' }, 'Replay from leaf');
  replay.addEventListener('click', async () => {
    const saved = await act(replay, messages, async () => (await api('POST', `/api/SecuritySink/${sink.id}/Replay`, { fromLeafIndex: Number(from.value) })).json);
    if (saved) {
      await load();
      select(saved.id, `Leaves from ${formatNumber(saved.nextLeafIndex)} will be sent again, in order.`);
    }
  });
  const remove = h('button', { type: 'button', class: 'danger', id: 'delete-sink' }, 'Delete');
  remove.addEventListener('click', async () => {
    if (!(await confirmDialog({ title: `Delete ${sink.name}?`, message: 'Nothing more is sent to it. The audit log itself is not changed.', confirmLabel: 'Delete', danger: true }))) return;
    const done = await act(remove, messages, async () => (await api('DELETE', `/api/SecuritySink/${sink.id}`), true));
    if (done) {
      await load();
      placeholder();
    }
  });
  return [test, pause, h('span', { class: 'inline-field' }, replay, from), remove];
}

function placeholder() {
  selectedId = null;
  renderList();
  clear(detail).append(h('section', { class: 'card placeholder' }, h('p', { class: 'muted' }, 'Select a sink to see its state, test it, replay, pause or change it.')));
}

/** @param {number} id @param {string} [message] */
function select(id, message) {
  const sink = sinks.find((s) => s.id === id);
  if (!sink) return placeholder();
  history.replaceState(null, '', `?sink=${sink.id}`);
  showForm(sink, message);
}

await load();
const wanted = Number(new URLSearchParams(location.search).get('sink'));
if (sinks.some((s) => s.id === wanted)) select(wanted);
else placeholder();
document.body.dataset.ready = 'true';
