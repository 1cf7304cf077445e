// A small text/event-stream parser (the WHATWG "event stream interpretation"
// subset mcphost needs) and a reader that feeds it from a fetch Response.

export class SSEParser {
  /** onEvent({event, data, id}) is called once per dispatched event; onComment(text) per comment line. */
  constructor(onEvent, onComment = () => {}) {
    this.onEvent = onEvent;
    this.onComment = onComment;
    this.buf = '';
    this.first = true;
    this.reset();
  }

  reset() {
    this.event = '';
    this.data = [];
  }

  /** push feeds decoded text; complete lines are processed, the rest is kept. */
  push(text) {
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    this.buf += text;
    let start = 0;
    for (;;) {
      const nl = this.nextBreak(start);
      if (nl === null) break;
      this.line(this.buf.slice(start, nl.at));
      start = nl.at + nl.len;
    }
    this.buf = this.buf.slice(start);
  }

  nextBreak(from) {
    for (let i = from; i < this.buf.length; i++) {
      const c = this.buf.charCodeAt(i);
      if (c === 10) return { at: i, len: 1 };
      if (c === 13) {
        // A CR at the very end may be the first half of CRLF: wait for more.
        if (i + 1 >= this.buf.length) return null;
        return { at: i, len: this.buf.charCodeAt(i + 1) === 10 ? 2 : 1 };
      }
    }
    return null;
  }

  line(line) {
    if (line === '') {
      this.dispatch();
      return;
    }
    if (line.startsWith(':')) {
      this.onComment(line.slice(1).trim());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event': this.event = value; break;
      case 'data': this.data.push(value); break;
      case 'id': if (!value.includes('\0')) this.lastId = value; break;
      default: break; // "retry" and unknown fields: the caller does its own backoff
    }
  }

  dispatch() {
    if (this.data.length > 0) {
      this.onEvent({ event: this.event || 'message', data: this.data.join('\n'), id: this.lastId ?? '' });
    }
    this.reset();
  }
}

/**
 * readEventStream reads res.body to its end, calling onEvent for each event
 * and onActivity for every chunk (comments included). It resolves when the
 * stream ends and rejects when it breaks or is aborted.
 */
export async function readEventStream(res, onEvent, onActivity = () => {}) {
  const parser = new SSEParser(onEvent, () => {});
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      onActivity();
      parser.push(value);
    }
  } finally {
    reader.releaseLock?.();
  }
}
