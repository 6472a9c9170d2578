// Small DOM helpers. Every piece of text goes in through textContent or a text node, never as HTML,
// so nothing a user or a row carries can become markup.

const SVG_NS = 'http://www.w3.org/2000/svg';

function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

function assign(element, attributes) {
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'text') element.textContent = String(value);
    else if (name === 'class') element.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name === 'style' || name.startsWith('on')) throw new Error(`refusing attribute ${name}`);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
}

/** Creates an HTML element: h('button', { class: 'primary', onclick }, 'Save'). */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  assign(element, attributes);
  append(element, children);
  return element;
}

/** Creates an SVG element. */
export function s(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG_NS, tag);
  assign(element, attributes);
  append(element, children);
  return element;
}

export function clear(element) {
  element.replaceChildren();
  return element;
}

export function byId(id) {
  return document.getElementById(id);
}

const pad = (n) => String(n).padStart(2, '0');

/** An ISO instant as local "YYYY-MM-DD HH:mm:ss"; empty for null. */
export function formatDate(value) {
  if (value === null || value === undefined || value === '') return '';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return String(value);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

const numberFormat = new Intl.NumberFormat(undefined, { maximumFractionDigits: 2 });

export function formatNumber(value) {
  if (value === null || value === undefined || value === '') return '';
  const n = Number(value);
  return Number.isFinite(n) ? numberFormat.format(n) : String(value);
}

/** A message box: kind is info, success, warning or error. Lines may be a string or a list. */
export function notice(kind, lines, options = {}) {
  const list = Array.isArray(lines) ? lines : [lines];
  return h(
    'div',
    { class: ['notice', `notice-${kind}`], role: kind === 'error' || kind === 'warning' ? 'alert' : 'status', 'data-testid': options.testid },
    list.length === 1 ? list[0] : h('ul', {}, list.map((line) => h('li', {}, line))),
  );
}

/** A labelled form field. */
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

/** The exact value behind a formatted duration, for a title: "133,971,466 µs". */
export function microsecondsTitle(value) {
  if (value === null || value === undefined || value === '') return null;
  return `${new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 }).format(Number(value))} µs`;
}

/** Digits after the point needed to tell apart values `resolution` apart, in a unit of `unitSize`. */
function decimalsFor(resolution, unitSize, least, most) {
  if (!(resolution > 0)) return least;
  return Math.min(most, Math.max(least, Math.ceil(-Math.log10(resolution / unitSize) - 1e-9)));
}

const fixed = (value, decimals) => new Intl.NumberFormat(undefined, { minimumFractionDigits: 0, maximumFractionDigits: decimals }).format(value);

/**
 * Microseconds precise enough that values `resolution` µs apart read differently (a histogram's
 * bucket width, say): 8.9 s for a lone value, but 8.912 s beside 8.915 s.
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
 */
export function formatMeasure(value, unit, { resolution } = {}) {
  if (value === null || value === undefined || value === '') return { text: '', title: null };
  const n = Number(value);
  if (!Number.isFinite(n)) return { text: String(value), title: null };
  if (unit === 'µs') return { text: resolution > 0 ? microsecondsAt(n, resolution) : formatMicroseconds(n), title: microsecondsTitle(n) };
  const decimals = resolution > 0 ? decimalsFor(resolution, 1, 0, 4) : Math.abs(n) >= 1_000 ? 0 : 2;
  const text = fixed(n, decimals);
  const exact = new Intl.NumberFormat(undefined, { maximumFractionDigits: 6 }).format(n);
  return { text, title: exact === text ? null : exact };
}

/** Moves the keyboard focus to an element that is not focusable by itself (a heading, a message). */
export function focusOn(element) {
  if (!element) return;
  if (!element.hasAttribute('tabindex')) element.setAttribute('tabindex', '-1');
  element.focus();
}
