// The host-drawn chrome around an MCP App beyond its inline frame
// (docs/apps.md §12, in the shared docs): the display modes fullscreen (an
// overlay inside the WebShell with the server's name, an always-visible
// close button, and Escape) and picture-in-picture (a small docked frame
// that stays in view while the transcript scrolls), and the panel of the
// tools an App registers, which the user calls with a form generated from
// their inputSchema. appbridge.js decides and asks the daemon; this module
// only draws. Nothing an App sends reaches the DOM as markup.
//
// The App's iframe is never moved in the DOM (that would reload it): a
// mode is a class on the frame's wrapper and a bar inserted before the
// frame.

import { h, clear, isPlainObject, pretty } from './dom.js';
import { compileSchema, buildForm } from './schemaform.js';

export const DISPLAY_MODES = ['inline', 'fullscreen', 'pip'];

// The mount that is fullscreen now, if any: one at a time.
let fullscreenOwner = null;

document.addEventListener('keydown', (e) => {
  if (e.key === 'Escape' && fullscreenOwner) {
    e.preventDefault();
    fullscreenOwner.userExit();
  }
});

/**
 * ModeChrome draws the display mode of one App's wrapper. onUserExit is
 * called when the user leaves fullscreen or picture-in-picture (close
 * button, Escape): the App is then told it is inline again.
 */
export class ModeChrome {
  constructor(wrap, iframe, serverName, onUserExit) {
    this.wrap = wrap;
    this.iframe = iframe;
    this.serverName = serverName || 'Unknown server';
    this.onUserExit = onUserExit;
    this.mode = 'inline';
    this.bar = null;
  }

  /** set draws mode ("inline", "fullscreen" or "pip"). */
  set(mode) {
    if (!DISPLAY_MODES.includes(mode) || mode === this.mode) return;
    if (mode === 'fullscreen' && fullscreenOwner && fullscreenOwner !== this) fullscreenOwner.userExit();
    this.mode = mode;
    this.wrap.classList.toggle('mode-fullscreen', mode === 'fullscreen');
    this.wrap.classList.toggle('mode-pip', mode === 'pip');
    this.wrap.dataset.displayMode = mode;
    this.bar?.remove();
    this.bar = null;
    if (fullscreenOwner === this) fullscreenOwner = null;
    if (mode === 'inline') return;
    if (mode === 'fullscreen') fullscreenOwner = this;
    const close = h('button', { type: 'button', class: 'app-mode-close', testid: 'app-mode-close',
      'aria-label': mode === 'fullscreen' ? 'Close fullscreen (Escape)' : 'Back into the transcript' },
    mode === 'fullscreen' ? 'Close ✕' : 'Back inline');
    close.addEventListener('click', () => this.userExit());
    this.bar = h('div', { class: 'app-mode-bar', testid: 'app-mode-bar', role: 'toolbar' },
      h('span', { class: 'app-mode-server' }, `${this.serverName} MCP App`),
      h('span', { class: 'muted app-mode-name' }, mode === 'fullscreen' ? 'fullscreen · Escape closes' : 'picture-in-picture'),
      h('span', { class: 'spacer' }), close);
    this.wrap.insertBefore(this.bar, this.iframe);
    if (mode === 'fullscreen') close.focus();
  }

  userExit() {
    if (this.mode === 'inline') return;
    this.set('inline');
    this.onUserExit?.();
  }

  /** dimensions of the container in the current mode, for hostContext. */
  dimensions(inline) {
    if (this.mode === 'inline') return inline;
    const r = this.iframe.getBoundingClientRect();
    return { width: Math.round(r.width), height: Math.round(r.height) };
  }

  close() {
    if (fullscreenOwner === this) fullscreenOwner = null;
    this.bar?.remove();
  }
}

const MAX_TOOLS = 32;
const MAX_NAME = 128;
const MAX_TEXT = 2000;
const MAX_RESULT_CHARS = 20000;

/**
 * checkAppTools returns the tools of an App's tools/list answer that can be
 * offered (at most 32, each with a name of 1–128 characters and an object
 * inputSchema when it has one), and how many were left out.
 */
export function checkAppTools(result) {
  const list = isPlainObject(result) && Array.isArray(result.tools) ? result.tools : [];
  const out = [];
  let skipped = 0;
  const names = new Set();
  for (const t of list) {
    const ok = isPlainObject(t) && typeof t.name === 'string' && t.name.length > 0 && t.name.length <= MAX_NAME
      && !names.has(t.name) && (t.inputSchema === undefined || isPlainObject(t.inputSchema));
    if (!ok || out.length >= MAX_TOOLS) {
      skipped++;
      continue;
    }
    names.add(t.name);
    out.push({
      name: t.name,
      title: typeof t.title === 'string' ? t.title.slice(0, MAX_NAME) : '',
      description: typeof t.description === 'string' ? t.description.slice(0, MAX_TEXT) : '',
      inputSchema: isPlainObject(t.inputSchema) ? t.inputSchema : { type: 'object' },
    });
  }
  return { tools: out, skipped };
}

// resultText is the text of a CallToolResult for the panel.
function resultText(r) {
  if (!isPlainObject(r)) return pretty(r);
  const texts = Array.isArray(r.content) ? r.content.filter((c) => isPlainObject(c) && c.type === 'text' && typeof c.text === 'string').map((c) => c.text) : [];
  const s = texts.length ? texts.join('\n') : pretty(r.structuredContent ?? r);
  return s.length > MAX_RESULT_CHARS ? `${s.slice(0, MAX_RESULT_CHARS)}…` : s;
}

/**
 * AppToolsPanel lists the tools an App offers under its entry. call(name,
 * args) must return a promise of the App's CallToolResult (or reject with
 * an Error whose message is shown).
 */
export class AppToolsPanel {
  constructor(slot, serverName, call) {
    this.call = call;
    this.list = h('div', { class: 'app-tools-list' });
    this.note = h('p', { class: 'muted app-tools-note', hidden: true });
    this.el = h('details', { class: 'app-tools', testid: 'app-tools', open: true },
      h('summary', {}, 'Tools this App offers ', h('span', { class: 'muted' }, `(run inside the ${serverName || 'unknown'} App)`)),
      this.note, this.list);
    slot.append(this.el);
  }

  /** show lists tools (as checkAppTools returns them). */
  show({ tools, skipped }) {
    clear(this.list);
    this.note.hidden = skipped === 0;
    this.note.textContent = skipped ? `${skipped} tool(s) the App offered could not be shown.` : '';
    if (!tools.length) this.list.append(h('p', { class: 'muted' }, 'The App offers no tools right now.'));
    for (const t of tools) this.list.append(this.toolItem(t));
  }

  toolItem(t) {
    let form = null;
    let problem = '';
    try {
      form = buildForm(compileSchema(t.inputSchema));
    } catch (err) {
      problem = err?.message || String(err);
    }
    const out = h('pre', { class: 'content-text app-tool-result', testid: 'app-tool-result', hidden: true });
    const err = h('p', { class: 'form-error app-tool-error', testid: 'app-tool-error', role: 'alert', hidden: true });
    const btn = h('button', { type: 'submit', class: 'primary small', testid: 'app-tool-call' }, 'Call in the App');
    const body = h('form', { class: 'app-tool-form', novalidate: true, 'data-app-tool': t.name },
      form ? form.el : h('p', { class: 'muted' }, `The form cannot show this tool's arguments: ${problem}`),
      h('div', { class: 'form-actions' }, btn), err, out);
    body.addEventListener('submit', async (e) => {
      e.preventDefault();
      err.hidden = true;
      if (!form) return;
      const { value, errors } = form.collect(true);
      if (errors.length) {
        err.textContent = errors.slice(0, 5).join('; ');
        err.hidden = false;
        return;
      }
      btn.disabled = true;
      out.hidden = false;
      out.textContent = 'Waiting for the App…';
      try {
        const r = await this.call(t.name, value);
        out.textContent = resultText(r);
        out.dataset.isError = String(isPlainObject(r) && r.isError === true);
      } catch (e2) {
        out.hidden = true;
        err.textContent = e2?.message || String(e2);
        err.hidden = false;
      } finally {
        btn.disabled = false;
      }
    });
    return h('details', { class: 'app-tool', testid: `app-tool-${t.name}` },
      h('summary', {}, h('strong', {}, t.title || t.name), ' ', h('code', {}, t.name)),
      t.description ? h('p', { class: 'muted' }, t.description) : null, body);
  }

  remove() {
    this.el.remove();
  }
}

/** MAX_DOWNLOAD_BYTES bounds the files of one ui/download-file, together. */
export const MAX_DOWNLOAD_BYTES = 10 << 20;
const MAX_FILE_NAME = 100;

/**
 * safeFileName turns what an App calls a file into a plain name for the
 * browser to save under: no directories (the last path segment of a URI or
 * path), no control characters or characters file systems refuse, no
 * leading dots, at most 100 characters; "download" when nothing is left.
 */
export function safeFileName(raw) {
  let s = typeof raw === 'string' ? raw : '';
  try {
    if (/^[a-z][a-z0-9+.-]*:/i.test(s)) s = decodeURIComponent(new URL(s).pathname || '');
  } catch {
    /* not a URL: taken as it is */
  }
  s = s.split(/[\\/]/).filter((p) => p !== '' && p !== '.' && p !== '..').pop() ?? '';
  s = s.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').replace(/^[.\s]+/, '').trim();
  if (s.length > MAX_FILE_NAME) {
    const dot = s.lastIndexOf('.');
    const ext = dot > 0 && s.length - dot <= 10 ? s.slice(dot) : '';
    s = s.slice(0, MAX_FILE_NAME - ext.length) + ext;
  }
  return s || 'download';
}

/**
 * confirmDownload asks the user whether to save files ({name, size,
 * mimeType}) an App of server offers; it resolves true only on a click on
 * "Save". signal (an AbortSignal) cancels it.
 */
export function confirmDownload(server, files, signal) {
  return new Promise((resolve) => {
    const save = h('button', { type: 'button', class: 'primary', testid: 'app-download-save' }, files.length > 1 ? `Save ${files.length} files` : 'Save file');
    const cancel = h('button', { type: 'button', testid: 'app-download-cancel' }, 'Cancel');
    const dialog = h('dialog', { class: 'app-link-dialog', testid: 'app-download-dialog', 'aria-labelledby': 'app-download-title' },
      h('h2', { id: 'app-download-title' }, 'Save a file from an MCP App?'),
      h('p', {}, 'The MCP App of server ', h('strong', {}, server || 'unknown'), ' offers:'),
      h('ul', { testid: 'app-download-files' }, files.map((f) => h('li', {}, h('code', {}, f.name), ` — ${f.size} bytes`, f.mimeType ? `, ${f.mimeType}` : ''))),
      h('p', { class: 'muted' }, 'Save it only if you expected this App to give you a file.'),
      h('div', { class: 'app-link-actions' }, cancel, save));
    askInDialog(dialog, save, cancel, signal).then(resolve);
  });
}

/**
 * askInDialog shows the modal dialog and resolves true only on a click on
 * yes; no, Escape, closing it and signal (an AbortSignal) resolve false.
 * The safe choice, no, has the focus. The dialog leaves the page after.
 */
export function askInDialog(dialog, yes, no, signal) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (ok) => {
      if (done) return;
      done = true;
      signal?.removeEventListener('abort', onAbort);
      if (dialog.open) dialog.close();
      dialog.remove();
      resolve(ok);
    };
    const onAbort = () => finish(false);
    yes.addEventListener('click', () => finish(true));
    no.addEventListener('click', () => finish(false));
    dialog.addEventListener('cancel', () => finish(false)); // Escape
    dialog.addEventListener('close', () => finish(false));
    signal?.addEventListener('abort', onAbort);
    document.body.append(dialog);
    dialog.showModal();
    no.focus();
  });
}

/** saveFile has the browser save bytes (a Uint8Array) under name. */
export function saveFile(name, bytes) {
  // application/octet-stream: saved, never shown or sniffed as a page.
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
  if (Array.isArray(window.__mcphostDownloads)) window.__mcphostDownloads.push({ name, size: bytes.length });
}
