// A server's resources and prompts, opened from its card into the main
// panel: a resource is read and shown (text as text, images as images,
// other blobs offered as a download), a template's URI is filled in first,
// and a prompt is got with its arguments and its messages shown. What a
// server sends goes in as text, an image only as a data: URL of an image
// type, and a download is always application/octet-stream, so nothing it
// sends can run in the WebShell's origin.

import { h, clear, append, isPlainObject, pretty } from './dom.js';
import { api, seg } from './api.js';

const str = (v) => (typeof v === 'string' ? v : '');

// maxShownBytes bounds what is shown inline (text or image); larger
// contents are offered as a download.
const maxShownBytes = 4 << 20;

const imageTypes = /^image\/(png|jpeg|gif|webp|svg\+xml|avif|bmp)$/;

/** showResource fills panel with the resource uri of server (or, with tpl,
 * a form for the template's URI). sessionOf() names the transcript session
 * the read is recorded in ('' for none). */
export function showResource(panel, server, uri, tpl, sessionOf = () => '') {
  const out = h('div', { class: 'offering-output', testid: 'resource-output', 'aria-live': 'polite' });
  const uriInput = h('input', { id: 'resource-uri', testid: 'resource-uri', value: uri || str(tpl?.uriTemplate), autocomplete: 'off', spellcheck: 'false' });
  const read = async () => {
    clear(out).append(h('p', { class: 'muted' }, 'Reading…'));
    try {
      const r = await api('POST', `/servers/${seg(server)}/resources/read`, { uri: uriInput.value.trim(), sessionId: sessionOf() || undefined });
      const contents = (Array.isArray(r?.contents) ? r.contents : []).filter(isPlainObject);
      append(clear(out), [contents.length ? contents.map((c) => contentOf(c)) : h('p', { class: 'muted' }, 'The resource is empty.')]);
    } catch (err) {
      clear(out).append(h('p', { class: 'server-error', testid: 'resource-error' }, err?.message || String(err)));
    }
  };
  const form = h('form', { class: 'offering-form' },
    h('label', { for: 'resource-uri' }, 'URI'), uriInput,
    h('button', { type: 'submit', class: 'primary', testid: 'resource-read' }, 'Read'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    read();
  });
  append(clear(panel), [h('section', { class: 'offering', testid: 'resource-panel' },
    h('h2', { class: 'panel-title' }, `${server} · ${tpl ? 'resource template' : 'resource'}`),
    tpl && str(tpl.description) ? h('p', { class: 'muted' }, tpl.description) : null,
    form, out)]);
  if (!tpl) read();
  else uriInput.focus();
}

// contentOf shows one ResourceContents; idPrefix tells the test ids of
// the transcript's copy ('entry-') from the panel's ('').
export function contentOf(c, idPrefix = '') {
  const mime = str(c.mimeType);
  const head = h('p', { class: 'offering-meta muted' }, [str(c.uri), mime].filter(Boolean).join(' · '));
  if (typeof c.text === 'string') {
    if (c.text.length > maxShownBytes) return h('div', {}, head, download(new TextEncoder().encode(c.text), c.uri, c.text.length));
    return h('div', {}, head, h('pre', { class: 'content-text', testid: `${idPrefix}resource-text` }, c.text));
  }
  if (typeof c.blob === 'string') {
    let bytes;
    try {
      bytes = Uint8Array.from(atob(c.blob), (ch) => ch.charCodeAt(0));
    } catch {
      return h('div', {}, head, h('p', { class: 'server-error' }, 'The server sent a blob that is not base64.'));
    }
    if (imageTypes.test(mime) && bytes.length <= maxShownBytes) {
      return h('div', {}, head, h('img', { class: 'resource-image', testid: `${idPrefix}resource-image`, alt: str(c.uri), src: `data:${mime};base64,${c.blob}` }));
    }
    return h('div', {}, head, download(bytes, c.uri, bytes.length));
  }
  return h('div', {}, head, h('pre', { class: 'content-text' }, pretty(c)));
}

// download offers bytes as a file named after the URI's last segment.
function download(bytes, uri, n) {
  const url = URL.createObjectURL(new Blob([bytes], { type: 'application/octet-stream' }));
  const a = h('a', { class: 'button small', testid: 'resource-download', href: url, download: fileName(uri) }, `Download (${n} bytes)`);
  return a;
}

// fileName is a safe file name from a URI: its last path segment, with
// nothing but letters, digits, '.', '-' and '_'.
export function fileName(uri) {
  let last = str(uri).split(/[?#]/)[0].split('/').filter(Boolean).pop() || 'resource';
  try {
    last = decodeURIComponent(last);
  } catch { /* keep it as it is */ }
  const safe = last.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+/, '').slice(0, 100);
  return safe || 'resource';
}

/** showPrompt fills panel with a form for prompt p of server and, once
 * got, its messages; sessionOf as for showResource. */
export function showPrompt(panel, server, p, sessionOf = () => '') {
  const args = (Array.isArray(p.arguments) ? p.arguments : []).filter((a) => isPlainObject(a) && typeof a.name === 'string');
  const inputs = new Map();
  const out = h('div', { class: 'offering-output', testid: 'prompt-output', 'aria-live': 'polite' });
  const form = h('form', { class: 'offering-form' },
    args.map((a, i) => {
      const id = `prompt-arg-${i}`;
      const input = h('input', { id, testid: `prompt-arg-${a.name}`, required: a.required === true, autocomplete: 'off' });
      inputs.set(a.name, input);
      return h('div', { class: 'field' },
        h('label', { for: id }, h('code', {}, a.name), a.required === true ? h('span', { class: 'required', title: 'required' }, ' *') : null),
        str(a.description) ? h('p', { class: 'muted' }, a.description) : null, input);
    }),
    h('button', { type: 'submit', class: 'primary', testid: 'prompt-get' }, 'Get prompt'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const values = {};
    for (const [k, input] of inputs) if (input.value !== '') values[k] = input.value;
    clear(out).append(h('p', { class: 'muted' }, 'Getting the prompt…'));
    try {
      const r = await api('POST', `/servers/${seg(server)}/prompts/get`, { name: p.name, arguments: values, sessionId: sessionOf() || undefined });
      const messages = (Array.isArray(r?.messages) ? r.messages : []).filter(isPlainObject);
      append(clear(out), [
        str(r?.description) ? h('p', { class: 'muted' }, r.description) : null,
        messages.map((m) => h('div', { class: 'prompt-message', testid: 'prompt-message' },
          h('span', { class: 'badge badge-muted' }, str(m.role) || '?'), messageContent(m.content)))]);
    } catch (err) {
      clear(out).append(h('p', { class: 'server-error', testid: 'prompt-error' }, err?.message || String(err)));
    }
  });
  append(clear(panel), [h('section', { class: 'offering', testid: 'prompt-panel' },
    h('h2', { class: 'panel-title' }, `${server} · prompt ${p.name}`),
    str(p.description) ? h('p', { class: 'muted' }, p.description) : null,
    form, out)]);
}

// messageContent shows the content of one prompt message.
export function messageContent(c) {
  if (!isPlainObject(c)) return null;
  switch (c.type) {
    case 'text':
      return h('pre', { class: 'content-text' }, str(c.text));
    case 'image':
      return imageTypes.test(str(c.mimeType)) && typeof c.data === 'string'
        ? h('img', { class: 'resource-image', alt: 'an image of the prompt', src: `data:${c.mimeType};base64,${c.data}` })
        : h('p', { class: 'muted' }, `[image ${str(c.mimeType)}]`);
    case 'resource':
      return isPlainObject(c.resource) ? contentOf(c.resource) : null;
    default:
      return h('pre', { class: 'content-text' }, pretty(c));
  }
}
