// Forms generated from a tool's inputSchema (JSON Schema).
//
// compileSchema turns the schema into a tree of plain nodes: local "$ref"s
// are resolved, "anyOf"/"oneOf" with a single non-null branch and one-element
// "allOf" are merged, and ["T", "null"] types become T. Anything else the
// form cannot express (real unions, recursion, tuples, conditionals) throws
// Unsupported, and the caller falls back to raw JSON.
//
// buildForm turns the tree into fields. A field is
//   { el, get(ctx) -> {present, value}, set(value) -> unknownKeyPaths[], focus() }
// where ctx = {strict, errors}. In strict mode get reports problems on the
// field and in ctx.errors; otherwise it returns what it can (used to carry
// the form over into the raw JSON view).

import { h, uid, isPlainObject, pretty } from './dom.js';

export class Unsupported extends Error {
  constructor(message) {
    super(message);
    this.name = 'Unsupported';
  }
}

const MAX_DEPTH = 16;
const UNSUPPORTED_KEYWORDS = ['not', 'if', 'then', 'else', 'prefixItems', 'contains', 'dependentSchemas'];

function resolvePointer(root, ref) {
  if (!ref.startsWith('#')) return undefined;
  const path = ref.slice(1);
  if (path === '') return root;
  if (!path.startsWith('/')) return undefined; // anchors ("#name") are not supported
  let cur = root;
  for (const raw of path.slice(1).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

const isNullSchema = (s) => isPlainObject(s) && (s.type === 'null' || (s.const === null && !('type' in s)));

// normalize returns s with $ref, single-branch unions and nullable types folded in.
function normalize(schema, root, refs, depth) {
  if (depth > MAX_DEPTH) throw new Unsupported('the schema nests too deeply');
  if (schema === true || schema === undefined) return { s: {}, refs };
  if (schema === false) return { s: null, refs };
  if (!isPlainObject(schema)) throw new Unsupported('part of the schema is not an object');
  let s = schema;
  if (typeof s.$ref === 'string') {
    const ref = s.$ref;
    if (refs.includes(ref)) throw new Unsupported(`"$ref": "${ref}" refers to itself`);
    const target = resolvePointer(root, ref);
    if (target === undefined) throw new Unsupported(`"$ref": "${ref}" cannot be resolved here`);
    const inner = normalize(target, root, [...refs, ref], depth + 1);
    if (inner.s === null) return inner;
    const { $ref: _, ...rest } = s;
    s = { ...inner.s, ...rest };
    refs = inner.refs;
  }
  for (const key of ['anyOf', 'oneOf']) {
    if (!(key in s)) continue;
    if (!Array.isArray(s[key])) throw new Unsupported(`"${key}" is not a list`);
    const branches = s[key].filter((b) => !isNullSchema(b));
    if (branches.length !== 1) throw new Unsupported(`"${key}" with ${branches.length} alternatives`);
    const inner = normalize(branches[0], root, refs, depth + 1);
    if (inner.s === null) throw new Unsupported(`"${key}" allows nothing`);
    const { [key]: _, ...rest } = s;
    s = { ...inner.s, ...rest };
    refs = inner.refs;
  }
  if ('allOf' in s) {
    if (!Array.isArray(s.allOf) || s.allOf.length !== 1) throw new Unsupported('"allOf" with several schemas');
    const inner = normalize(s.allOf[0], root, refs, depth + 1);
    if (inner.s === null) throw new Unsupported('"allOf" allows nothing');
    const { allOf: _, ...rest } = s;
    s = { ...inner.s, ...rest };
    refs = inner.refs;
  }
  for (const k of UNSUPPORTED_KEYWORDS) {
    if (k in s) throw new Unsupported(`"${k}"`);
  }
  if (Array.isArray(s.items)) throw new Unsupported('tuple "items"');
  let type = s.type;
  if (Array.isArray(type)) {
    const nonNull = type.filter((t) => t !== 'null');
    if (nonNull.length === 1) type = nonNull[0];
    else if (nonNull.length === 2 && nonNull.includes('integer') && nonNull.includes('number')) type = 'number';
    else throw new Unsupported(`"type": ${JSON.stringify(type)}`);
  }
  if (type !== undefined && typeof type !== 'string') throw new Unsupported('"type" is not a string');
  if (type === 'null') throw new Unsupported('"type": "null"');
  return { s: { ...s, type }, refs };
}

function kindOf(s) {
  if (Array.isArray(s.enum) && s.enum.length > 0) return 'enum';
  if ('const' in s) return 'const';
  switch (s.type) {
    case 'string': return 'string';
    case 'number': return 'number';
    case 'integer': return 'integer';
    case 'boolean': return 'boolean';
    case 'array': return 'array';
    case 'object':
      return isPlainObject(s.properties) && Object.keys(s.properties).length > 0 ? 'object' : 'json';
    case undefined:
      if (isPlainObject(s.properties) && Object.keys(s.properties).length > 0) return 'object';
      if ('items' in s) return 'array';
      return 'json';
    default:
      throw new Unsupported(`"type": "${s.type}"`);
  }
}

function compileNode(schema, root, refs, depth) {
  const { s, refs: r } = normalize(schema, root, refs, depth);
  if (s === null) return null;
  const node = { ...s, kind: kindOf(s) };
  if (node.kind === 'object') {
    const required = new Set(Array.isArray(s.required) ? s.required.filter((x) => typeof x === 'string') : []);
    node.props = [];
    for (const [name, sub] of Object.entries(s.properties)) {
      const child = compileNode(sub, root, r, depth + 1);
      if (child) node.props.push({ name, node: child, required: required.has(name) });
    }
    // The schema's own order: servers order their properties for people
    // (name before entityType), and mcphost keeps that order on its way
    // here (host/internal/transport/schemaorder.go).
    node.known = new Set(node.props.map((p) => p.name));
  } else if (node.kind === 'array') {
    node.item = compileNode(s.items ?? true, root, r, depth + 1) ?? { kind: 'json' };
  }
  return node;
}

/** compileSchema compiles a tool's inputSchema or throws Unsupported. */
export function compileSchema(schema) {
  if (schema === undefined || schema === null) return { kind: 'json', type: 'object', props: [] };
  const node = compileNode(schema, schema, [], 0);
  if (!node) throw new Unsupported('the schema allows no arguments at all');
  if (node.kind !== 'object' && node.kind !== 'json') throw new Unsupported('the arguments are not an object');
  return node;
}

// ---------------------------------------------------------------- fields

function hintText(node) {
  const hints = [];
  if (node.format) hints.push(`format: ${node.format}`);
  if (node.kind === 'string') {
    const min = node.minLength;
    const max = node.maxLength;
    if (Number.isFinite(min) && Number.isFinite(max)) hints.push(`${min}–${max} characters`);
    else if (Number.isFinite(min) && min > 0) hints.push(`at least ${min} characters`);
    else if (Number.isFinite(max)) hints.push(`at most ${max} characters`);
    if (typeof node.pattern === 'string') hints.push(`pattern: ${node.pattern}`);
  }
  if (node.kind === 'number' || node.kind === 'integer') {
    const lo = Number.isFinite(node.minimum) ? `≥ ${node.minimum}` : Number.isFinite(node.exclusiveMinimum) ? `> ${node.exclusiveMinimum}` : '';
    const hi = Number.isFinite(node.maximum) ? `≤ ${node.maximum}` : Number.isFinite(node.exclusiveMaximum) ? `< ${node.exclusiveMaximum}` : '';
    if (lo || hi) hints.push([lo, hi].filter(Boolean).join(', '));
    if (Number.isFinite(node.multipleOf)) hints.push(`multiple of ${node.multipleOf}`);
    if (node.kind === 'integer') hints.push('integer');
  }
  if (node.kind === 'array') {
    if (Number.isFinite(node.minItems) && node.minItems > 0) hints.push(`at least ${node.minItems} items`);
    if (Number.isFinite(node.maxItems)) hints.push(`at most ${node.maxItems} items`);
    if (node.uniqueItems) hints.push('unique items');
  }
  return hints.join(' · ');
}

/** The label, help text and error line shared by every field. */
class Frame {
  constructor(node, opts) {
    this.node = node;
    this.opts = opts; // {name, label, required, inArray}
    this.id = uid('f');
    this.helpId = `${this.id}-help`;
    this.errorId = `${this.id}-err`;
    this.errorEl = h('p', { class: 'field-error', id: this.errorId, hidden: true });
  }

  labelChildren() {
    const { name, label, required } = this.opts;
    const title = typeof this.node.title === 'string' && this.node.title ? this.node.title : label;
    return [
      h('span', { class: 'label-text' }, title),
      required ? h('span', { class: 'req', 'aria-hidden': 'true', title: 'required' }, '*') : null,
      name && title !== name ? h('code', { class: 'field-name' }, name) : null,
    ];
  }

  help() {
    const desc = typeof this.node.description === 'string' ? this.node.description : '';
    const hints = hintText(this.node);
    if (!desc && !hints) return null;
    return h('div', { class: 'help', id: this.helpId },
      desc ? h('p', { class: 'help-desc' }, desc) : null,
      hints ? h('p', { class: 'help-hints' }, hints) : null);
  }

  describe(control) {
    // An error goes away as soon as the field is edited.
    control.addEventListener('input', () => this.clearError(control));
    control.addEventListener('change', () => this.clearError(control));
    const ids = [this.errorId];
    if (!this.opts.inArray && (typeof this.node.description === 'string' || hintText(this.node))) ids.unshift(this.helpId);
    control.setAttribute('aria-describedby', ids.join(' '));
    if (this.opts.required) control.setAttribute('aria-required', 'true');
  }

  error(ctx, control, msg) {
    if (!ctx.strict) return;
    this.errorEl.textContent = msg;
    this.errorEl.hidden = false;
    control?.setAttribute('aria-invalid', 'true');
    ctx.errors.push({ message: `${this.opts.path || this.opts.label}: ${msg}`, focus: () => control?.focus() });
  }

  clearError(control) {
    this.errorEl.textContent = '';
    this.errorEl.hidden = true;
    control?.removeAttribute('aria-invalid');
  }
}

// Array items carry their number instead of a visible label and no help
// (the array's own label and help already say what they are).
const labelClass = (frame) => (frame.opts.inArray ? 'field-label sr-only' : 'field-label');
const helpFor = (frame) => (frame.opts.inArray ? null : frame.help());

function wrapField(frame, control, extraClass = '') {
  const label = h('label', { class: labelClass(frame), for: control.id }, frame.labelChildren());
  return h('div', { class: `field ${extraClass}`.trim() }, label, control, helpFor(frame), frame.errorEl);
}

const ABSENT = Object.freeze({ present: false, value: undefined });

function placeholderFor(node) {
  if (Array.isArray(node.examples) && node.examples.length > 0) {
    const ex = node.examples[0];
    return typeof ex === 'string' ? ex : JSON.stringify(ex);
  }
  switch (node.format) {
    case 'date-time': return '2026-01-31T09:00:00Z';
    case 'time': return '09:00:00';
    case 'duration': return 'PT1H30M';
    case 'uuid': return '00000000-0000-0000-0000-000000000000';
    default: return undefined;
  }
}

// Words in a property's name that mark free text, often several lines.
const MULTILINE_NAMES = new Set(['text', 'body', 'content', 'contents', 'code', 'source', 'script', 'notes',
  'abc', 'notation', 'markdown', 'md', 'sql', 'html', 'css', 'yaml', 'template', 'snippet', 'diff', 'patch', 'prompt', 'svg']);
// Descriptions and titles that say so.
// ("code" alone is not enough: a country code is one line.)
const MULTILINE_WORDS = /multi-?line|newlines?\b|line breaks?|markdown|source code|\b(?:JavaScript|TypeScript|Python|JS|SQL|HTML|CSS|shell) (?:code|source|snippet)|\bcode (?:to|that) (?:run|execute|render)|\bnotation\b|\bscript\b|\bYAML\b|\bparagraphs?\b|\bABC\b/i;

/**
 * isMultiline says whether a string field should be a textarea: when its
 * schema or value asks for one. JSON Schema has no standard keyword for it,
 * so these are the signs a server gives: a contentMediaType (code, markup,
 * notation), the non-standard format "textarea", a maxLength above one
 * line's worth, a default or example holding a newline, a title or
 * description that speaks of lines, code or markup, and a name like text,
 * body, code or abcNotation when nothing caps its length to one line.
 * A field that is not one still turns into one when a newline is pasted
 * into it or set in it (stringField), so no newline is ever lost.
 */
export function isMultiline(node, name = '') {
  if (node.writeOnly === true || node.format === 'password') return false;
  if (typeof node.contentMediaType === 'string' || node.format === 'textarea') return true;
  const max = Number(node.maxLength);
  if (max > 256) return true;
  const hasNewline = (v) => typeof v === 'string' && v.includes('\n');
  if (hasNewline(node.default) || (Array.isArray(node.examples) && node.examples.some(hasNewline))) return true;
  if (typeof node.format === 'string' && node.format !== '') return false; // a date, a URI, an email…
  if (Array.isArray(node.enum) || typeof node.pattern === 'string') return false;
  for (const t of [node.title, node.description]) {
    if (typeof t === 'string' && MULTILINE_WORDS.test(t)) return true;
  }
  const words = String(name).split(/[^A-Za-z0-9]+|(?<=[a-z0-9])(?=[A-Z])/).filter(Boolean).map((w) => w.toLowerCase());
  return !Number.isFinite(max) && words.length > 0 && MULTILINE_NAMES.has(words[words.length - 1]);
}

function textareaRows(value) {
  return Math.min(16, Math.max(4, value.split('\n').length + 1));
}

function stringField(node, opts) {
  const frame = new Frame(node, opts);
  // A secret (format "password", or writeOnly) is always a masked input.
  const secret = node.writeOnly === true || node.format === 'password';
  const typeByFormat = { email: 'email', uri: 'url', url: 'url', date: 'date', password: 'password' };
  const makeControl = (multiline) => {
    const c = multiline
      ? h('textarea', { id: frame.id, rows: 4, spellcheck: 'false', class: 'string-lines' })
      : h('input', { id: frame.id, type: secret ? 'password' : typeByFormat[node.format] || 'text', spellcheck: 'false', autocomplete: 'off' });
    if (Number.isFinite(node.minLength)) c.minLength = node.minLength;
    if (Number.isFinite(node.maxLength)) c.maxLength = node.maxLength;
    // JSON Schema patterns are unanchored ECMA-262 regexes while the HTML
    // pattern attribute is anchored and compiled with the v flag, so the
    // check is done here and the attribute only carries the hint.
    if (typeof node.pattern === 'string') c.dataset.pattern = node.pattern;
    const ph = placeholderFor(node);
    if (ph) c.placeholder = ph;
    if (opts.required) c.required = true;
    frame.describe(c);
    if (multiline) c.addEventListener('input', () => { c.rows = textareaRows(c.value); });
    else if (!secret) c.addEventListener('paste', onPaste);
    return c;
  };
  let control = makeControl(isMultiline(node, opts.name));

  // An <input> drops every newline of its value (the HTML value
  // sanitization of text fields), so a field becomes a textarea before a
  // value with one goes in: pasted, or set from a default or Raw JSON.
  // A secret keeps its mask and is sent as typed.
  function toTextarea() {
    if (control.tagName === 'TEXTAREA' || secret) return;
    const old = control;
    control = makeControl(true);
    control.value = old.value;
    old.replaceWith(control);
  }
  function onPaste(e) {
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (!/[\r\n]/.test(text)) return;
    e.preventDefault();
    const old = control;
    const start = old.selectionStart ?? old.value.length;
    const end = old.selectionEnd ?? start;
    const value = old.value.slice(0, start) + text.replace(/\r\n?/g, '\n') + old.value.slice(end);
    toTextarea();
    control.value = value;
    control.rows = textareaRows(value);
    const at = start + text.replace(/\r\n?/g, '\n').length;
    control.focus();
    control.setSelectionRange(at, at);
    control.dispatchEvent(new Event('input', { bubbles: true }));
  }

  return {
    el: wrapField(frame, control),
    get(ctx) {
      frame.clearError(control);
      const v = control.value;
      if (v === '' && !opts.inArray) {
        if (opts.required) frame.error(ctx, control, 'required');
        return ABSENT;
      }
      const len = [...v].length;
      if (Number.isFinite(node.minLength) && len < node.minLength) frame.error(ctx, control, `needs at least ${node.minLength} characters`);
      else if (Number.isFinite(node.maxLength) && len > node.maxLength) frame.error(ctx, control, `allows at most ${node.maxLength} characters`);
      else if (typeof node.pattern === 'string') {
        let re = null;
        try { re = new RegExp(node.pattern, 'u'); } catch { re = null; }
        if (re && !re.test(v)) frame.error(ctx, control, `does not match the pattern ${node.pattern}`);
      }
      return { present: true, value: v };
    },
    set(v) {
      const text = v === undefined || v === null ? '' : typeof v === 'string' ? v : String(v);
      if (/[\r\n]/.test(text)) toTextarea();
      control.value = text;
      if (control.tagName === 'TEXTAREA') control.rows = textareaRows(control.value);
      return [];
    },
    focus: () => control.focus(),
  };
}

function numberField(node, opts) {
  const frame = new Frame(node, opts);
  const integer = node.kind === 'integer';
  const control = h('input', { id: frame.id, type: 'number', inputmode: integer ? 'numeric' : 'decimal' });
  control.step = Number.isFinite(node.multipleOf) ? String(node.multipleOf) : integer ? '1' : 'any';
  const min = Number.isFinite(node.minimum) ? node.minimum : Number.isFinite(node.exclusiveMinimum) ? node.exclusiveMinimum : undefined;
  const max = Number.isFinite(node.maximum) ? node.maximum : Number.isFinite(node.exclusiveMaximum) ? node.exclusiveMaximum : undefined;
  if (min !== undefined) control.min = String(min);
  if (max !== undefined) control.max = String(max);
  const ph = placeholderFor(node);
  if (ph) control.placeholder = ph;
  if (opts.required) control.required = true;
  frame.describe(control);
  return {
    el: wrapField(frame, control),
    get(ctx) {
      frame.clearError(control);
      if (control.validity.badInput) {
        frame.error(ctx, control, 'is not a number');
        return ABSENT;
      }
      const raw = control.value.trim();
      if (raw === '') {
        if (opts.required || opts.inArray) frame.error(ctx, control, 'required');
        return ABSENT;
      }
      const n = Number(raw);
      if (!Number.isFinite(n)) {
        frame.error(ctx, control, 'is not a number');
        return ABSENT;
      }
      if (integer && !Number.isInteger(n)) frame.error(ctx, control, 'must be a whole number');
      else if (Number.isFinite(node.minimum) && n < node.minimum) frame.error(ctx, control, `must be ≥ ${node.minimum}`);
      else if (Number.isFinite(node.maximum) && n > node.maximum) frame.error(ctx, control, `must be ≤ ${node.maximum}`);
      else if (Number.isFinite(node.exclusiveMinimum) && n <= node.exclusiveMinimum) frame.error(ctx, control, `must be > ${node.exclusiveMinimum}`);
      else if (Number.isFinite(node.exclusiveMaximum) && n >= node.exclusiveMaximum) frame.error(ctx, control, `must be < ${node.exclusiveMaximum}`);
      else if (Number.isFinite(node.multipleOf) && node.multipleOf > 0) {
        const q = n / node.multipleOf;
        if (Math.abs(q - Math.round(q)) > 1e-9) frame.error(ctx, control, `must be a multiple of ${node.multipleOf}`);
      }
      return { present: true, value: n };
    },
    set(v) {
      control.value = typeof v === 'number' && Number.isFinite(v) ? String(v) : typeof v === 'string' ? v : '';
      return [];
    },
    focus: () => control.focus(),
  };
}

function booleanField(node, opts) {
  const frame = new Frame(node, opts);
  const control = h('input', { id: frame.id, type: 'checkbox' });
  frame.describe(control);
  const label = h('label', { class: 'check-label', for: frame.id }, frame.labelChildren());
  const el = h('div', { class: 'field field-check' }, h('div', { class: 'check-row' }, control, label), frame.help(), frame.errorEl);
  return {
    el,
    // An unchecked optional box is "left empty" and omitted, unless its
    // default is true (then unchecking it is a real choice: false).
    get() {
      frame.clearError(control);
      if (opts.required || opts.inArray || control.checked || node.default === true) {
        return { present: true, value: control.checked };
      }
      return ABSENT;
    },
    set(v) {
      control.checked = v === true;
      return [];
    },
    focus: () => control.focus(),
  };
}

function enumField(node, opts) {
  const frame = new Frame(node, opts);
  const control = h('select', { id: frame.id });
  const empty = h('option', { value: '' }, opts.required ? 'Choose…' : '(not set)');
  control.append(empty);
  node.enum.forEach((v, i) => {
    control.append(h('option', { value: String(i) }, typeof v === 'string' ? v : JSON.stringify(v)));
  });
  if (opts.required) control.required = true;
  frame.describe(control);
  return {
    el: wrapField(frame, control),
    get(ctx) {
      frame.clearError(control);
      if (control.value === '') {
        if (opts.required || opts.inArray) frame.error(ctx, control, 'choose a value');
        return ABSENT;
      }
      return { present: true, value: node.enum[Number(control.value)] };
    },
    set(v) {
      const want = JSON.stringify(v);
      const i = v === undefined ? -1 : node.enum.findIndex((x) => JSON.stringify(x) === want);
      control.value = i < 0 ? '' : String(i);
      return [];
    },
    focus: () => control.focus(),
  };
}

function constField(node, opts) {
  const frame = new Frame(node, opts);
  const control = h('input', { id: frame.id, type: 'text', readonly: true, value: JSON.stringify(node.const) });
  frame.describe(control);
  return {
    el: wrapField(frame, control),
    get: () => (opts.required || opts.inArray ? { present: true, value: node.const } : ABSENT),
    set: () => [],
    focus: () => control.focus(),
  };
}

function jsonField(node, opts) {
  const frame = new Frame(node, opts);
  const wantObject = node.type === 'object';
  const control = h('textarea', { id: frame.id, rows: 3, class: 'mono', spellcheck: 'false', placeholder: wantObject ? '{ }' : 'JSON value' });
  if (opts.required) control.required = true;
  frame.describe(control);
  return {
    el: wrapField(frame, control, 'field-json'),
    get(ctx) {
      frame.clearError(control);
      const raw = control.value.trim();
      if (raw === '') {
        if (opts.required || opts.inArray) frame.error(ctx, control, 'required (JSON)');
        return ABSENT;
      }
      let v;
      try {
        v = JSON.parse(raw);
      } catch (e) {
        frame.error(ctx, control, `is not valid JSON (${e.message})`);
        return ABSENT;
      }
      if (wantObject && !isPlainObject(v)) frame.error(ctx, control, 'must be a JSON object');
      return { present: true, value: v };
    },
    set(v) {
      control.value = v === undefined ? '' : pretty(v);
      return [];
    },
    focus: () => control.focus(),
  };
}

function arrayField(node, opts) {
  const frame = new Frame(node, opts);
  const list = h('ol', { class: 'array-items' });
  const items = []; // {field, li}
  const addButton = h('button', { type: 'button', class: 'small' }, 'Add item');
  const maxItems = Number.isFinite(node.maxItems) ? node.maxItems : Infinity;

  function renumber() {
    items.forEach((it, i) => {
      it.remove.setAttribute('aria-label', `Remove item ${i + 1} of ${frame.opts.label}`);
      it.num.textContent = String(i + 1);
    });
    addButton.disabled = items.length >= maxItems;
  }

  function add(value, focus) {
    const label = `${frame.opts.label} item`;
    const field = buildField(node.item, { name: '', label, required: true, inArray: true, path: `${opts.path}[]` });
    if (value !== undefined) field.set(value);
    const remove = h('button', { type: 'button', class: 'small ghost remove' }, 'Remove');
    const num = h('span', { class: 'item-num', 'aria-hidden': 'true' });
    const li = h('li', { class: 'array-item' }, num, h('div', { class: 'array-item-body' }, field.el), remove);
    const it = { field, li, remove, num };
    remove.addEventListener('click', () => {
      const i = items.indexOf(it);
      if (i < 0) return;
      items.splice(i, 1);
      li.remove();
      renumber();
      (items[i]?.remove ?? addButton).focus();
    });
    items.push(it);
    list.append(li);
    renumber();
    if (focus) field.focus();
  }

  addButton.addEventListener('click', () => add(undefined, true));
  const legend = h('legend', { class: labelClass(frame) }, frame.labelChildren());
  const el = h('fieldset', { class: 'field fieldset array', id: frame.id }, legend, helpFor(frame), list, addButton, frame.errorEl);
  frame.describe(el);
  const initial = Number.isFinite(node.minItems) ? Math.min(node.minItems, 10) : 0;
  for (let i = 0; i < initial; i++) add(undefined, false);

  return {
    el,
    get(ctx) {
      frame.clearError(null);
      const values = [];
      for (const it of items) {
        const r = it.field.get(ctx);
        if (r.present) values.push(r.value);
      }
      if (values.length === 0 && !opts.required && !opts.inArray) return ABSENT;
      if (Number.isFinite(node.minItems) && values.length < node.minItems) frame.error(ctx, addButton, `needs at least ${node.minItems} items`);
      else if (values.length > maxItems) frame.error(ctx, addButton, `allows at most ${maxItems} items`);
      else if (node.uniqueItems) {
        const seen = new Set(values.map((v) => JSON.stringify(v)));
        if (seen.size !== values.length) frame.error(ctx, addButton, 'items must be unique');
      }
      return { present: true, value: values };
    },
    set(v) {
      for (const it of items) it.li.remove();
      items.length = 0;
      if (Array.isArray(v)) for (const x of v) add(x, false);
      renumber();
      return [];
    },
    focus: () => (items[0]?.field ?? { focus: () => addButton.focus() }).focus(),
  };
}

function objectField(node, opts) {
  const frame = new Frame(node, opts);
  const children = node.props.map((p) => ({
    name: p.name,
    field: buildField(p.node, { name: p.name, label: p.name, required: p.required, inArray: false, path: opts.path ? `${opts.path}.${p.name}` : p.name }),
  }));
  const body = children.map((c) => c.field.el);
  const el = opts.top
    ? h('div', { class: 'fields' }, body)
    : h('fieldset', { class: 'field fieldset object', id: frame.id },
      h('legend', { class: labelClass(frame) }, frame.labelChildren()), helpFor(frame), h('div', { class: 'fields' }, body), frame.errorEl);

  function collect(ctx) {
    const out = {};
    let any = false;
    for (const c of children) {
      const r = c.field.get(ctx);
      if (r.present) {
        out[c.name] = r.value;
        any = true;
      }
    }
    return { out, any };
  }

  return {
    el,
    get(ctx) {
      // An optional object nobody filled in is omitted, and its required
      // members are not reported.
      if (!opts.required && !opts.inArray && !opts.top) {
        if (!collect({ strict: false, errors: [] }).any) return ABSENT;
      }
      return { present: true, value: collect(ctx).out };
    },
    set(v) {
      const unknown = [];
      const obj = isPlainObject(v) ? v : {};
      for (const c of children) {
        for (const u of c.field.set(obj[c.name])) unknown.push(`${c.name}.${u}`);
      }
      for (const k of Object.keys(obj)) if (!node.known.has(k)) unknown.push(k);
      return unknown;
    },
    focus: () => children[0]?.field.focus(),
  };
}

function buildField(node, opts) {
  let field;
  switch (node.kind) {
    case 'string': field = stringField(node, opts); break;
    case 'number':
    case 'integer': field = numberField(node, opts); break;
    case 'boolean': field = booleanField(node, opts); break;
    case 'enum': field = enumField(node, opts); break;
    case 'const': field = constField(node, opts); break;
    case 'array': field = arrayField(node, opts); break;
    case 'object': field = objectField(node, opts); break;
    default: field = jsonField(node, opts); break;
  }
  if ('default' in node && node.default !== undefined) field.set(node.default);
  return field;
}

/**
 * buildForm builds the fields for a compiled top-level schema. It returns
 * {el, empty, collect(strict) -> {value, errors}, set(obj) -> unknownKeyPaths, focus()}.
 * empty is true when the tool takes no arguments.
 */
export function buildForm(compiled) {
  if (compiled.kind !== 'object') {
    return {
      el: h('p', { class: 'muted no-args' }, 'This tool takes no arguments.'),
      empty: true,
      collect: () => ({ value: {}, errors: [] }),
      set: (obj) => (isPlainObject(obj) ? Object.keys(obj) : []),
      focus: () => {},
    };
  }
  const root = objectField(compiled, { name: '', label: 'arguments', required: true, top: true, path: '' });
  return {
    el: root.el,
    empty: false,
    collect(strict) {
      const ctx = { strict, errors: [] };
      const r = root.get(ctx);
      return { value: r.present ? r.value : {}, errors: ctx.errors };
    },
    set: (obj) => root.set(obj),
    focus: () => root.focus(),
  };
}

/** defaultArguments returns the top-level defaults of a schema, for the raw JSON view. */
export function defaultArguments(schema) {
  const out = {};
  if (isPlainObject(schema) && isPlainObject(schema.properties)) {
    for (const [k, v] of Object.entries(schema.properties)) {
      if (isPlainObject(v) && 'default' in v) out[k] = v.default;
    }
  }
  return out;
}
