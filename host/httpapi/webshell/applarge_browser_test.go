package webshell_test

// The two official examples that needed an operator's setting (issue 31
// row 10): the PDF App, 4.3 MB of HTML with PDF.js inside, over the old
// 4 MiB cap, and the three.js App, which evaluates the scene's code with
// new Function and so needs 'unsafe-eval' (app_csp_unsafe_eval).

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mcphost/mcphost/host/config"
)

const (
	pdfPkg     = "@modelcontextprotocol/server-pdf"
	threejsPkg = "@modelcontextprotocol/server-threejs"
)

// tinyPDF is a one-page PDF that shows text in large Helvetica, built
// with the byte offsets its cross-reference table needs.
func tinyPDF(text string) []byte {
	stream := fmt.Sprintf("BT /F1 36 Tf 40 700 Td (%s) Tj ET\n0 0.5 0.9 rg 40 400 500 200 re f\n", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(stream), stream),
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// pdfServer is the PDF example with one local file it may open (its
// README: files given on the command line), and that file's path.
func pdfServer(t *testing.T) (config.Server, string) {
	dir := t.TempDir()
	file := filepath.Join(dir, "mcphost-test.pdf")
	if err := os.WriteFile(file, tinyPDF("mcphost PDF test"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Run as root, the sandbox runs the server as another user, and
	// t.TempDir's directories are 0700.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s := exampleServer(t, "pdf", pdfPkg)
	s.Args = append(s.Args, file)
	s.Sandbox.Read = append(s.Sandbox.Read, dir)
	s.AppToolCalls = true // the viewer reads the document with read_pdf_bytes, an App-only tool
	return s, file
}

// TestOfficialPDFApp: with app_resource_max_bytes at the most (16 MiB)
// and app_csp_unsafe_eval (PDF.js loads its worker from a data: URL) the
// PDF App renders instead of its text fallback, reads the local document
// through its server and draws it; at the default size it is refused as
// too large, with the reason.
func TestOfficialPDFApp(t *testing.T) {
	big, file := pdfServer(t)
	big.AppResourceMaxBytes = config.MaxAppResourceMaxBytes
	// PDF.js imports its worker from a data: URL, a script built at run
	// time like eval's: only this switch allows it.
	big.AppCSPUnsafeEval = true
	small, smallFile := pdfServer(t)
	small.Name = "pdfsmall"
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		cfg.Servers = append(cfg.Servers, big, small)
	})
	tb := newTab(t)
	tb.login(d)
	tb.do("a large window", chromedp.EmulateViewport(1280, 1000))

	e := tb.callExampleWith("pdf", "display_pdf", map[string]string{"url": file})
	sel := entryOf(e.ID)
	tb.waitFor("the PDF App to be ready or refused", `['ready', 'fallback'].includes(document.querySelector('`+sel+` [data-testid=app-slot]')?.dataset.mcpAppState)`)
	if tb.shown(sel + ` [data-testid=app-fallback]`) {
		t.Fatalf("the PDF App shows its fallback: %s", eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-slot]').textContent`))
	}
	// The viewer fetches the document in chunks with its App-only tool,
	// then PDF.js draws the page, whose box is the blue (0, 0.5, 0.9) of
	// tinyPDF: a few thousand of those pixels are the document itself, not
	// the viewer's chrome or its spinner.
	tb.waitAppCalls(d, e.ID, "read_pdf_bytes", 1)
	tb.waitDrawn("pixels of the PDF's blue box in the App's frame", 2000, func() int { return tb.pdfBlue(sel + ` iframe.app-frame`) })
	tb.screenshot("pdf", sel)

	e = tb.callExampleWith("pdfsmall", "display_pdf", map[string]string{"url": smallFile})
	sel = entryOf(e.ID)
	tb.waitFor("the fallback of the PDF App at the default cap", `document.querySelector('`+sel+` [data-testid=app-slot]')?.dataset.mcpAppState === 'fallback'`)
	if got := eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-slot]').textContent`); !strings.Contains(got, "too large") || !strings.Contains(got, "limit 1048576") {
		t.Errorf("the fallback says %q, want why (too large, the limit)", got)
	}
}

// pdfBlue counts the pixels of tinyPDF's blue box in the frame sel.
func (tb *tab) pdfBlue(sel string) int {
	tb.t.Helper()
	n := 0
	near := func(v, want uint32) bool { return v+12 >= want && v <= want+12 }
	tb.framePixels(sel, func(r, g, b uint32) {
		if near(r, 0) && near(g, 128) && near(b, 230) {
			n++
		}
	})
	return n
}

// threejsCode is the example's default scene (a lit, turning cube) on one
// line, without the line comment the default has: this test is about the
// CSP, not about how the form keeps newlines.
const threejsCode = `const scene = new THREE.Scene(); const camera = new THREE.PerspectiveCamera(75, width / height, 0.1, 1000); ` +
	`const renderer = new THREE.WebGLRenderer({ canvas, antialias: true, alpha: true }); renderer.setSize(width, height); ` +
	`const cube = new THREE.Mesh(new THREE.BoxGeometry(1, 1, 1), new THREE.MeshStandardMaterial({ color: 0x00ff88 })); scene.add(cube); ` +
	`scene.add(new THREE.DirectionalLight(0xffffff, 1)); scene.add(new THREE.AmbientLight(0x404040)); camera.position.z = 3; ` +
	`function animate() { requestAnimationFrame(animate); cube.rotation.x += 0.01; cube.rotation.y += 0.01; renderer.render(scene, camera); } animate();`

// TestOfficialThreejsApp: the three.js App runs its scene with new
// Function. With app_csp_unsafe_eval its frame is marked and the scene
// draws without an error; without it, the same App reports the CSP's
// refusal (it gives the error as context for the model, shown under its
// entry) and its frame has no marker.
func TestOfficialThreejsApp(t *testing.T) {
	servers := map[string]bool{"threejs": true, "threejsstrict": false}
	d := newDaemonWith(t, func(cfg *config.Config, _ string) {
		for name, eval := range servers {
			s := exampleServer(t, name, threejsPkg)
			s.AppResourceMaxBytes = 2 << 20 // the App is 1.2 MB
			s.AppModelContext = true        // where the App reports a scene error
			s.AppCSPUnsafeEval = eval
			cfg.Servers = append(cfg.Servers, s)
		}
	})
	tb := newTab(t)
	tb.login(d)
	tb.do("a large window", chromedp.EmulateViewport(1280, 1000))
	contextText := func(sel string) string {
		return eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-context-text]')?.textContent ?? ''`)
	}

	t.Run("allowed", func(t *testing.T) {
		e := tb.callExampleWith("threejs", "show_threejs_scene", map[string]string{"code": threejsCode})
		sel := entryOf(e.ID)
		tb.waitReady(sel)
		if got := eval[string](tb, `document.querySelector('`+sel+` [data-testid=app-unsafe-eval]')?.textContent ?? ''`); got != "unsafe-eval allowed by the server's config" {
			t.Errorf("marker %q, want the unsafe-eval badge on the App's frame", got)
		}
		src := eval[string](tb, `document.querySelector('`+sel+` iframe.app-frame')?.src ?? ''`)
		if !strings.Contains(src, "unsafeEval=1") {
			t.Errorf("sandbox URL %q lacks unsafeEval=1", src)
		}
		// WebGL (SwiftShader in headless Chromium) draws on animation
		// frames: a green, lit cube has many shades.
		tb.waitDrawn("the scene's colours (a drawn, lit cube)", 30, func() int { return tb.frameColors(sel + ` iframe.app-frame`) })
		if got := contextText(sel); strings.Contains(got, "rror") {
			t.Errorf("the App reported an error: %q", got)
		}
		tb.screenshot("threejs", sel)
	})

	t.Run("refused", func(t *testing.T) {
		e := tb.callExampleWith("threejsstrict", "show_threejs_scene", map[string]string{"code": threejsCode})
		sel := entryOf(e.ID)
		tb.waitReady(sel)
		tb.waitFor("the App's scene error", `(document.querySelector('`+sel+` [data-testid=app-context-text]')?.textContent ?? '').includes('unsafe-eval')`)
		if got := contextText(sel); !strings.Contains(got, "Content Security Policy") {
			t.Errorf("the App's error %q does not name the CSP", got)
		}
		if tb.shown(sel + ` [data-testid=app-unsafe-eval]`) {
			t.Error("the marker is shown on an App whose server does not allow eval")
		}
		if src := eval[string](tb, `document.querySelector('`+sel+` iframe.app-frame')?.src ?? ''`); strings.Contains(src, "unsafeEval") {
			t.Errorf("sandbox URL %q asks for eval", src)
		}
		tb.screenshot("threejs-refused", sel)
	})
}
