// The preamble the WebShell puts before an MCP App's HTML (appbridge.js,
// withPreamble). It is not WebShell code: its text runs only inside the
// App's sandboxed, opaque realm, before the App's own scripts, and the DOM
// APIs it names are the ones it guards there. TestNoHTMLSinks therefore
// does not scan this file; nothing here may be used by the WebShell page.

// APP_PREAMBLE runs in the App's document before any of its own scripts: it
// removes the WebRTC constructors (from the App's realm and every nested
// frame's) and reports uncaught errors and unhandled rejections (an App that throws or
// rejects the host's ui/initialize answer) to the host, so that the host
// can show the error at once instead of waiting for a timeout. The App can
// send the same message itself; it can only make its own mount fail.
export const APP_PREAMBLE = `<script>(() => {
  // WebRTC: CSP does not govern it, so an App could send STUN packets
  // wherever it likes. Its constructors are taken out of this realm before
  // the App's code runs, and out of every nested frame's realm as soon as
  // the App can reach that frame (insertions, contentWindow, frames[i],
  // loads, DOM changes).
  const RTC = ['RTCPeerConnection', 'webkitRTCPeerConnection', 'RTCDataChannel', 'RTCSessionDescription',
    'RTCIceCandidate', 'RTCRtpSender', 'RTCRtpReceiver', 'RTCRtpTransceiver', 'RTCDtlsTransport',
    'RTCIceTransport', 'RTCSctpTransport', 'RTCCertificate', 'RTCDTMFSender', 'RTCRtpScriptTransform'];
  // A nested frame the App fills itself (srcdoc, javascript: and other
  // non-http URLs) would be a realm of its own with the constructors back:
  // such frames are taken out before they load. (A blank nested frame gets
  // an opaque origin of its own: the App cannot reach into it.)
  const FRAMES = 'iframe, frame, object, embed';
  const okSrc = (v) => v === null || v === '' || v === 'about:blank' || /^https?:\\/\\//i.test(String(v).trim());
  const bad = (el) => el.tagName !== 'IFRAME' || el.hasAttribute('srcdoc') || !okSrc(el.getAttribute('src'));
  let removed = 0;
  const neuter = (root) => {
    try {
      const all = [];
      if (root && root.nodeType === 1 && root.matches(FRAMES)) all.push(root);
      if (root && root.querySelectorAll) all.push(...root.querySelectorAll(FRAMES));
      for (const el of all) {
        if (!bad(el)) continue;
        el.removeAttribute('srcdoc');
        el.remove();
        if (removed++ === 0) {
          window.parent.postMessage({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'warning', logger: 'mcphost',
            data: 'a nested frame with its own content (srcdoc or a non-http URL) was removed: Apps may not open realms of their own' } }, '*');
        }
      }
    } catch { /* nothing to check */ }
  };
  const hardened = new WeakSet();
  const harden = (w) => {
    try {
      if (!w || hardened.has(w)) return;
      hardened.add(w);
    } catch { return; }
    for (const n of RTC) {
      try { Object.defineProperty(w, n, { value: undefined, writable: false, configurable: false }); } catch { /* already gone */ }
    }
    const sweep = () => {
      neuter(w.document);
      try { for (let i = 0; i < w.length; i++) harden(w[i]); } catch { /* a frame that went away */ }
    };
    const guard = (proto, name, check) => {
      const d = proto && Object.getOwnPropertyDescriptor(proto, name);
      if (!d) return;
      try {
        if (d.set) {
          Object.defineProperty(proto, name, { configurable: false, enumerable: d.enumerable, get: d.get,
            set: function (v) { if (check(this, v)) d.set.call(this, v); } });
        } else if (typeof d.value === 'function') {
          const f = d.value;
          Object.defineProperty(proto, name, { configurable: false, writable: false, enumerable: d.enumerable,
            value: function (n, v, ...rest) { if (check(this, v, n)) return f.call(this, n, v, ...rest); } });
        }
      } catch { /* left as it is */ }
    };
    try {
      const isFrame = (el) => el instanceof w.HTMLIFrameElement;
      guard(w.HTMLIFrameElement.prototype, 'srcdoc', () => false);
      guard(w.HTMLIFrameElement.prototype, 'src', (el, v) => okSrc(v));
      guard(w.Element.prototype, 'setAttribute', (el, v, n) => !isFrame(el) || (String(n).toLowerCase() !== 'srcdoc' && (String(n).toLowerCase() !== 'src' || okSrc(v))));
    } catch { /* a realm without a DOM */ }
    const wrap = (proto, name) => {
      const d = proto && Object.getOwnPropertyDescriptor(proto, name);
      if (!d) return;
      try {
        if (typeof d.value === 'function') {
          const f = d.value;
          Object.defineProperty(proto, name, { configurable: false, writable: false, enumerable: d.enumerable,
            value: function (...a) { try { return f.apply(this, a); } finally { sweep(); } } });
        } else if (d.get || d.set) {
          Object.defineProperty(proto, name, { configurable: false, enumerable: d.enumerable,
            get: d.get && function () { const v = d.get.call(this); sweep(); return v; },
            set: d.set && function (v) { try { d.set.call(this, v); } finally { sweep(); } } });
        }
      } catch { /* left as it is */ }
    };
    try {
      for (const n of ['appendChild', 'insertBefore', 'replaceChild']) wrap(w.Node.prototype, n);
      for (const n of ['append', 'prepend', 'before', 'after', 'replaceWith', 'insertAdjacentElement',
        'insertAdjacentHTML', 'setHTMLUnsafe', 'innerHTML', 'outerHTML', 'setAttributeNS']) wrap(w.Element.prototype, n);
      for (const n of ['append', 'prepend']) wrap(w.DocumentFragment.prototype, n);
      for (const n of ['innerHTML', 'setHTMLUnsafe']) wrap(w.ShadowRoot?.prototype, n);
      for (const n of ['write', 'writeln', 'open']) wrap(w.Document.prototype, n);
      for (const n of ['contentWindow', 'contentDocument']) wrap(w.HTMLIFrameElement.prototype, n);
      w.addEventListener('load', sweep, true);
      new w.MutationObserver(sweep).observe(w.document, { childList: true, subtree: true, attributes: true, attributeFilter: ['src', 'srcdoc'] });
    } catch { /* a realm without a DOM */ }
  };
  harden(window);

  const parent = window.parent;
  const text = (v) => {
    try {
      if (v instanceof Error) return (v.name || 'Error') + ': ' + v.message;
      return typeof v === 'string' ? v : JSON.stringify(v);
    } catch { return String(v); }
  };
  const send = (where, v) => {
    try {
      parent.postMessage({ jsonrpc: '2.0', method: '${'mcphost/notifications/app-error'}',
        params: { where, message: text(v).slice(0, ${1000}) } }, '*');
    } catch { /* nothing to report to */ }
  };
  window.addEventListener('error', (e) => send('uncaught error', e.error ?? e.message));
  window.addEventListener('unhandledrejection', (e) => send('unhandled rejection', e.reason));
})();</script>`;
