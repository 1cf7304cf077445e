// The tool search box's requests: what a person types is ranked by the
// daemon (GET /api/v1/tools?search=, the same ranker as the gateway's
// search_tools and `mcphost tools -search`), never filtered here. The
// requests are debounced, and an answer that a newer query overtook is
// dropped, so the list always shows the results of the last query asked.
// Pure apart from the timers it is given: app.js wires it to the page,
// testdata/js/toolsearch.test.mjs tests it with node.

/** How long the box must rest before its query goes out. */
export const SEARCH_DELAY_MS = 150;

/** The most tools a search shows (the API's own bound is 100). */
export const SEARCH_LIMIT = 100;

/** searchPath is the API path (below /api/v1) of a search for query. */
export function searchPath(query, limit = SEARCH_LIMIT) {
  return `/tools?search=${encodeURIComponent(query)}&limit=${limit}`;
}

/**
 * createToolSearch returns the controller of a search box.
 *
 * search(query) returns a promise of the API's answer ({tools, total});
 * show(result) is called with {query, tools, total, error} for the last
 * query asked: tools null and query '' when the box is empty (the page
 * shows every tool), error the reason when the search failed (tools []).
 * delay and timers (setTimeout, clearTimeout) are for tests.
 *
 * set(text) takes the box's text; flush() sends a query still waiting
 * for its delay at once and resolves once the last query is shown;
 * reset() forgets everything (a sign-out).
 */
export function createToolSearch({ search, show, delay = SEARCH_DELAY_MS, timers = globalThis }) {
  let seq = 0; // the number of the last query asked
  let timer = null;
  let waiting = ''; // the query the timer will send
  let last = Promise.resolve();

  const cancel = () => {
    if (timer !== null) timers.clearTimeout(timer);
    timer = null;
  };

  const run = (query) => {
    timer = null;
    const mine = ++seq;
    last = Promise.resolve()
      .then(() => search(query))
      .then(
        (r) => {
          if (mine !== seq) return;
          const tools = Array.isArray(r?.tools) ? r.tools : [];
          const total = Number.isSafeInteger(r?.total) ? r.total : tools.length;
          show({ query, tools, total, error: null });
        },
        (err) => {
          if (mine !== seq) return;
          show({ query, tools: [], total: 0, error: err });
        });
    return last;
  };

  return {
    set(text) {
      const query = String(text ?? '').trim();
      cancel();
      if (query === '') {
        seq++;
        last = Promise.resolve();
        show({ query: '', tools: null, total: 0, error: null });
        return;
      }
      waiting = query;
      timer = timers.setTimeout(() => run(waiting), delay);
    },
    flush() {
      if (timer === null) return last;
      cancel();
      return run(waiting);
    },
    reset() {
      cancel();
      seq++;
      last = Promise.resolve();
    },
  };
}
