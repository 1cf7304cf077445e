package webshell_test

// WebRTC egress from an App: CSP does not govern WebRTC, so an App with
// connect-src 'none' could otherwise send STUN packets to any UDP port. The
// bridge's preamble takes the peer-connection constructors out of the App's
// realm and out of every nested frame's before the App can reach them.

import (
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// webrtcProbe tries every way it knows to get a peer connection to the
// STUN server at %[1]s (a loopback UDP port): in its own realm, through
// nested blank frames (contentWindow, frames[i]), and in nested frames it
// fills itself (a srcdoc frame in its HTML, srcdoc set by property, by
// setAttribute and by innerHTML, a javascript: URL), whose scripts try the
// same. It reports what it saw; the nested scripts can only be caught by
// the packets they would send.
const webrtcProbe = `<!doctype html><html><body>
<iframe srcdoc="<script>try { const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:%[1]s' }] }); pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) {}</script>"></iframe>
<script>
const stun = 'stun:%[1]s';
const nested = "<script>try { const pc = new RTCPeerConnection({ iceServers: [{ urls: '" + stun + "' }] }); pc.createDataChannel('x'); pc.createOffer().then((o) => pc.setLocalDescription(o)); } catch (e) {}<" + "/script>";
const report = {};
const tryPC = (name, get) => {
  let C;
  try { C = get(); } catch (e) { report[name] = 'unreachable ' + e.name; return; }
  if (typeof C !== 'function') { report[name] = 'absent'; return; }
  try {
    const pc = new C({ iceServers: [{ urls: stun }] });
    pc.createDataChannel('x');
    pc.createOffer().then((o) => pc.setLocalDescription(o)).catch(() => {});
    report[name] = 'CREATED';
  } catch (e) { report[name] = 'threw ' + e.name; }
};
tryPC('window', () => window.RTCPeerConnection);
tryPC('webkit', () => window.webkitRTCPeerConnection);
const f1 = document.createElement('iframe');
document.body.appendChild(f1);
tryPC('contentWindow', () => f1.contentWindow.RTCPeerConnection);
tryPC('frames[i]', () => window[window.length - 1].RTCPeerConnection);
const f2 = document.createElement('iframe');
f2.srcdoc = nested;
f2.setAttribute('srcdoc', nested);
document.body.appendChild(f2);
document.body.insertAdjacentHTML('beforeend', '<iframe srcdoc="' + nested.replace(/"/g, '&quot;') + '"></iframe>');
const f3 = document.createElement('iframe');
f3.src = 'javascript:"' + nested.replace(/"/g, '\\"') + '"';
document.body.appendChild(f3);
report.frames = document.querySelectorAll('iframe').length;
report.srcdocs = [...document.querySelectorAll('iframe')].filter((f) => f.hasAttribute('srcdoc')).length;
window.addEventListener('message', (e) => {
  if (e.source === window.parent && e.data && e.data.result && e.data.result.hostContext) {
    window.parent.postMessage({ jsonrpc: '2.0', method: 'ui/notifications/initialized' }, '*');
    window.parent.postMessage({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { event: 'webrtc', report } } }, '*');
  }
});
window.parent.postMessage({ jsonrpc: '2.0', id: 1, method: 'ui/initialize',
  params: { protocolVersion: '2026-01-26', appInfo: { name: 'webrtc', version: '1' }, appCapabilities: {} } }, '*');
</script></body></html>`

// TestAppWebRTCClosed mounts the probe and listens on a loopback UDP port:
// no way of making a peer connection works, and no packet arrives.
func TestAppWebRTCClosed(t *testing.T) {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var packets atomic.Int64
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			packets.Add(1)
		}
	}()

	d := newDaemon(t)
	tb := newTab(t)
	tb.login(d)
	tb.enableAppLog()
	slot := tb.mountTestApp("webrtc", fmt.Sprintf(webrtcProbe, pc.LocalAddr().String()), "")
	tb.waitFor("the probe to start", `['ready', 'fallback'].includes(document.querySelector('`+slot+`')?.dataset.mcpAppState)`)
	if note := eval[string](tb, `document.querySelector('`+slot+` [data-testid=app-note]')?.textContent ?? ''`); note != "" {
		t.Fatalf("the probe did not start: %s", note)
	}
	rec := tb.waitAppEvent("webrtc")
	var r struct {
		Report map[string]any `json:"report"`
	}
	if err := json.Unmarshal(rec.Data, &r); err != nil {
		t.Fatal(err)
	}
	t.Logf("WebRTC probe: %v", r.Report)
	for _, k := range []string{"window", "webkit", "contentWindow", "frames[i]"} {
		v, _ := r.Report[k].(string)
		if !strings.HasPrefix(v, "absent") && !strings.HasPrefix(v, "unreachable") {
			t.Errorf("%s: %q, want no peer connection constructor", k, v)
		}
	}
	// Only the blank frame (f1) is left; the frames with content of their
	// own were removed or never got it.
	if r.Report["srcdocs"] != float64(0) {
		t.Errorf("%v frames kept a srcdoc", r.Report["srcdocs"])
	}
	// A peer connection gathers its candidates at once; give a working one
	// the time to send, then count (this bounds the wait, it times nothing).
	time.Sleep(2 * time.Second)
	if n := packets.Load(); n != 0 {
		t.Errorf("%d UDP packets reached the loopback STUN port", n)
	}
}
