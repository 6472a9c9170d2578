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
