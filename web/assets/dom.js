// Small DOM helpers. Every piece of text goes in through textContent or a text node, never as HTML,
// so nothing a user or a row carries can become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

/**
 * What h() and s() accept as children: nodes, text (numbers written as text), nested lists, and
 * null, undefined or false for "nothing here".
 * @typedef {import('./page-types.js').Child} Child
 */

/**
 * Attributes of h() and s(): `text`, `class` (a list drops its falsy names), `dataset`, `on…`
 * listeners; any other name is set as an attribute (true as present, null/undefined/false left out).
 * @typedef {{ [name: string]: unknown }} Attributes
 */

/** @param {Element} parent @param {Child[]} children */
function append(parent, children) {
  for (const child of /** @type {unknown[]} */ (children).flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** @param {HTMLElement | SVGElement} element @param {Attributes | undefined} attributes */
function assign(element, attributes) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'text') element.textContent = String(value);
    else if (name === 'class') element.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : String(value));
    else if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name === 'style' || name.startsWith('on')) throw new Error(`refusing attribute ${name}`);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
}

/**
 * Creates an HTML element: h('button', { class: 'primary', onclick }, 'Save').
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 * @returns {HTMLElementTagNameMap[K]}
 */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  assign(element, attributes);
  append(element, children);
  return element;
}

/**
 * Creates an SVG element.
 * @template {keyof SVGElementTagNameMap} K
 * @param {K} tag
 * @param {Attributes} [attributes]
 * @param {...Child} children
 * @returns {SVGElementTagNameMap[K]}
 */
export function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  assign(element, attributes);
  append(element, children);
  return element;
}

/**
 * Empties an element and answers it.
 * @template {Element} E
 * @param {E} element
 * @returns {E}
 */
export function clear(element) {
  element.replaceChildren();
  return element;
}

/**
 * An element of the page's shell that is always there (#content, #nav, #session) or one a page drew.
 * @param {string} id
 * @returns {HTMLElement}
 */
export function byId(id) {
  return /** @type {HTMLElement} */ (document.getElementById(id));
}

/** @param {number} n */
const pad = (n) => String(n).padStart(2, '0');

// ---- time zones: every date says its zone; the reader picks local time or UTC -------------------

const ZONE_KEY = 'time-zone';

/** @typedef {'utc' | 'local'} ZoneMode */

/**
 * 'utc' or 'local': how this browser shows dates, as the reader last chose (kept in localStorage).
 * The API and the CSV export are UTC whatever is chosen here.
 * @returns {ZoneMode}
 */
export function zoneMode() {
  try {
    return localStorage.getItem(ZONE_KEY) === 'utc' ? 'utc' : 'local';
  } catch {
    return 'local';
  }
}

/** Remembers the reader's choice of zone ('utc' or 'local'). @param {string} mode */
export function setZoneMode(mode) {
  try {
    localStorage.setItem(ZONE_KEY, mode === 'utc' ? 'utc' : 'local');
  } catch {
    // private mode: the choice lasts for this page only
  }
}

const zoneNames = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' });

/**
 * The short name of the zone a date is shown in: "UTC", or the browser's zone at that instant
 * ("EST", "EDT", "GMT+1", "GMT+5:30"), so summer and winter time each say which they are.
 * @param {number | string | Date} [value]
 * @param {ZoneMode} [mode]
 */
export function zoneName(value = Date.now(), mode = zoneMode()) {
  if (mode === 'utc') return 'UTC';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return '';
  return zoneNames.formatToParts(d).find((part) => part.type === 'timeZoneName')?.value ?? 'local';
}

/** The IANA name of the browser's zone ("America/New_York"), for the switch's explanation. */
export function localZoneId() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone ?? 'local';
}

/**
 * The wall-clock parts of an instant in the chosen zone.
 * @param {number | string | Date} value
 * @param {ZoneMode} [mode]
 */
export function clockParts(value, mode = zoneMode()) {
  const d = value instanceof Date ? value : new Date(value);
  if (mode === 'utc') {
    return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate(), hour: d.getUTCHours(), minute: d.getUTCMinutes(), second: d.getUTCSeconds() };
  }
  return { year: d.getFullYear(), month: d.getMonth() + 1, day: d.getDate(), hour: d.getHours(), minute: d.getMinutes(), second: d.getSeconds() };
}

/**
 * An ISO instant as "YYYY-MM-DD HH:mm:ss ZONE" in the chosen zone ("2026-11-25 14:19:32 EST",
 * "2026-11-25 19:19:32 UTC"); empty for null.
 * @param {unknown} value
 * @returns {string}
 */
export function formatDate(value) {
  if (value === null || value === undefined || value === '') return '';
  const d = new Date(/** @type {string | number | Date} */ (value));
  if (Number.isNaN(d.getTime())) return String(value);
  const p = clockParts(d);
  return `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour)}:${pad(p.minute)}:${pad(p.second)} ${zoneName(d)}`;
}

/**
 * formatDate's text for a narrow cell: it may break between the day and the time, never inside
 * either ("2026-11-25" over "14:19:32 EST"), so a table of dates fits a card instead of scrolling.
 * @param {unknown} value
 */
export function wrappingDate(value) {
  const text = formatDate(value);
  const space = text.indexOf(' ');
  if (space < 0) return text;
  return h('span', {}, h('span', { class: 'nowrap' }, text.slice(0, space)), ' ', h('span', { class: 'nowrap' }, text.slice(space + 1)));
}

/**
 * "HH:mm" (or "MM-DD HH:mm" with `day`) in the chosen zone, for a chart's time axis.
 * @param {number | string | Date} value
 * @param {{ day?: boolean, seconds?: boolean }} [options]
 */
export function formatClock(value, { day = false, seconds = false } = {}) {
  const p = clockParts(new Date(value));
  const time = `${pad(p.hour)}:${pad(p.minute)}${seconds ? `:${pad(p.second)}` : ''}`;
  return day ? `${pad(p.month)}-${pad(p.day)} ${time}` : time;
}

/** A `datetime-local` value ("YYYY-MM-DDTHH:mm", wall time in the chosen zone) as an ISO instant. @param {string} wall */
export function wallTimeToIso(wall) {
  if (!wall) return '';
  const d = zoneMode() === 'utc' ? new Date(`${wall}Z`) : new Date(wall);
  return Number.isNaN(d.getTime()) ? '' : d.toISOString();
}

/** An ISO instant as a `datetime-local` value in the chosen zone. @param {string} iso */
export function isoToWallTime(iso) {
  if (!iso) return '';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const p = clockParts(d);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}T${pad(p.hour)}:${pad(p.minute)}`;
}

/**
 * How long ago an instant was, in words: "just now", "4 min ago", "3 h ago", "12 days ago"; empty
 * for null. `now` is the browser's clock.
 * @param {string | number | Date | null | undefined} value
 * @param {number} [now]
 */
export function formatAgo(value, now = Date.now()) {
  if (value === null || value === undefined || value === '') return '';
  const ms = now - new Date(value).getTime();
  if (!Number.isFinite(ms)) return '';
  if (ms < 60_000) return ms < -60_000 ? 'in the future' : 'under a minute ago';
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.floor(hours / 24)} days ago`;
}

const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

/** A number as this browser writes it (at most 2 decimals); other text as it is. @param {unknown} value */
export function formatNumber(value) {
  if (value === null || value === undefined || value === '') return '';
  const n = Number(value);
  return Number.isFinite(n) ? numberFormat.format(n) : String(value);
}

/**
 * A message box: kind is info, success, warning or error. Lines may be a string or a list.
 * @param {'info' | 'success' | 'warning' | 'error'} kind
 * @param {Child | Child[]} lines
 * @param {{ testid?: string }} [options]
 */
export function notice(kind, lines, options = {}) {
  const list = Array.isArray(lines) ? lines : [lines];
  return h(
    'div',
    { class: ['notice', `notice-${kind}`], role: kind === 'error' || kind === 'warning' ? 'alert' : 'status', 'data-testid': options.testid },
    list.length === 1 ? list[0] : h('ul', {}, list.map((line) => h('li', {}, line))),
  );
}

/**
 * A labelled form field.
 * @param {string} label
 * @param {HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement} input
 * @param {string} [hint]
 */
export function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('div', { class: 'hint' }, hint) : null);
}

const duration1 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const duration0 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });

/**
 * Microseconds in the unit a person reads: 850 µs, 12.3 ms, 512 ms, 45.8 s, 2 min 14 s, 3 h 12 min.
 * The exact value stays available through `microsecondsTitle` (shown on hover).
 * @param {unknown} value
 * @returns {string}
 */
export function formatMicroseconds(value) {
  if (value === null || value === undefined || value === '') return '';
  const us = Number(value);
  if (!Number.isFinite(us)) return String(value);
  const sign = us < 0 ? '−' : '';
  const a = Math.abs(us);
  if (a < 1_000) return `${sign}${duration0.format(a)} µs`;
  if (a < 100_000) return `${sign}${duration1.format(a / 1_000)} ms`;
  if (a < 1_000_000) return `${sign}${duration0.format(a / 1_000)} ms`;
  if (a < 60_000_000) return `${sign}${duration1.format(a / 1_000_000)} s`;
  const seconds = Math.round(a / 1_000_000);
  if (seconds < 3_600) return `${sign}${Math.floor(seconds / 60)} min ${seconds % 60} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 1_440) return `${sign}${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  const hours = Math.round(minutes / 60);
  return `${sign}${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** The exact value behind a formatted duration, for a title: "133,971,466 µs". @param {unknown} value */
export function microsecondsTitle(value) {
  if (value === null || value === undefined || value === '') return null;
  return `${new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 }).format(Number(value))} µs`;
}

/**
 * Digits after the point needed to tell apart values `resolution` apart, in a unit of `unitSize`.
 * @param {number | undefined} resolution @param {number} unitSize @param {number} least @param {number} most
 */
function decimalsFor(resolution, unitSize, least, most) {
  if (resolution === undefined || !(resolution > 0)) return least;
  return Math.min(most, Math.max(least, Math.ceil(-Math.log10(resolution / unitSize) - 1e-9)));
}

/** @param {number} value @param {number} decimals */
const fixed = (value, decimals) => new Intl.NumberFormat(undefined, { minimumFractionDigits: 0, maximumFractionDigits: decimals }).format(value);

/**
 * Microseconds precise enough that values `resolution` µs apart read differently (a histogram's
 * bucket width, say): 8.9 s for a lone value, but 8.912 s beside 8.915 s.
 * @param {number} us @param {number} resolution
 */
function microsecondsAt(us, resolution) {
  const a = Math.abs(us);
  const sign = us < 0 ? '−' : '';
  if (a >= 60_000_000 && resolution >= 1_000_000) return formatMicroseconds(us);
  if (a < 1_000) return `${sign}${fixed(a, decimalsFor(resolution, 1, 0, 3))} µs`;
  if (a < 1_000_000) return `${sign}${fixed(a / 1_000, decimalsFor(resolution, 1_000, a < 100_000 ? 1 : 0, 3))} ms`;
  return `${sign}${fixed(a / 1_000_000, decimalsFor(resolution, 1_000_000, 1, 6))} s`;
}

/**
 * A value of a measure, answering { text, title }: `unit: 'µs'` in human units with the exact
 * microseconds as its title; other numbers whole from 1,000 up (the exact value as title). With
 * `resolution`, enough digits that values that far apart never read the same.
 * @param {unknown} value
 * @param {string | null | undefined} unit
 * @param {{ resolution?: number }} [options]
 * @returns {{ text: string, title: string | null }}
 */
export function formatMeasure(value, unit, { resolution } = {}) {
  if (value === null || value === undefined || value === '') return { text: '', title: null };
  const n = Number(value);
  if (!Number.isFinite(n)) return { text: String(value), title: null };
  if (unit === 'µs') return { text: resolution !== undefined && resolution > 0 ? microsecondsAt(n, resolution) : formatMicroseconds(n), title: microsecondsTitle(n) };
  const decimals = resolution !== undefined && resolution > 0 ? decimalsFor(resolution, 1, 0, 4) : Math.abs(n) >= 1_000 ? 0 : 2;
  const text = fixed(n, decimals);
  const exact = new Intl.NumberFormat(undefined, { maximumFractionDigits: 6 }).format(n);
  return { text, title: exact === text ? null : exact };
}

/**
 * Moves the keyboard focus to an element that is not focusable by itself (a heading, a message).
 * @param {Element | ChildNode | null | undefined} element
 */
export function focusOn(element) {
  if (!(element instanceof HTMLElement)) return;
  if (!element.hasAttribute('tabindex')) element.setAttribute('tabindex', '-1');
  element.focus();
}
