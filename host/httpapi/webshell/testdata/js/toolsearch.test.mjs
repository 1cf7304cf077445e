// Unit tests of toolsearch.js, run by `node --test` from
// TestWebShellModules (modules_test.go). The timers are fake: a test
// decides when the delay has passed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createToolSearch, searchPath, SEARCH_LIMIT } from '../../assets/toolsearch.js';

// fakeTimers runs a callback only when fire() is called.
function fakeTimers() {
  const due = new Map();
  let next = 1;
  return {
    setTimeout(fn) {
      const id = next++;
      due.set(id, fn);
      return id;
    },
    clearTimeout(id) {
      due.delete(id);
    },
    pending() {
      return due.size;
    },
    fire() {
      const fns = [...due.values()];
      due.clear();
      for (const fn of fns) fn();
    },
  };
}

// deferred is a promise the test settles.
function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test('searchPath encodes the query and asks for the limit', () => {
  assert.equal(searchPath('add two & more'), `/tools?search=add%20two%20%26%20more&limit=${SEARCH_LIMIT}`);
  assert.equal(searchPath('x', 5), '/tools?search=x&limit=5');
});

test('typing sends one query, the last, once the box rests', async () => {
  const timers = fakeTimers();
  const asked = [];
  const shown = [];
  const s = createToolSearch({
    search: async (q) => {
      asked.push(q);
      return { tools: [{ server: 'fx', name: 'add' }], total: 3 };
    },
    show: (r) => shown.push(r),
    timers,
  });
  s.set('a');
  s.set('ad');
  s.set(' add two ');
  assert.equal(timers.pending(), 1);
  assert.deepEqual(asked, []);
  timers.fire();
  await s.flush();
  assert.deepEqual(asked, ['add two']);
  assert.deepEqual(shown, [{ query: 'add two', tools: [{ server: 'fx', name: 'add' }], total: 3, error: null }]);
});

test('an answer overtaken by a newer query is dropped', async () => {
  const timers = fakeTimers();
  const answers = new Map();
  const shown = [];
  const s = createToolSearch({
    search: (q) => {
      const d = deferred();
      answers.set(q, d);
      return d.promise;
    },
    show: (r) => shown.push(r),
    timers,
  });
  s.set('echo');
  timers.fire();
  await Promise.resolve();
  s.set('add');
  const done = s.flush();
  await Promise.resolve();
  answers.get('add').resolve({ tools: [{ name: 'add' }], total: 1 });
  await done;
  answers.get('echo').resolve({ tools: [{ name: 'echo' }], total: 1 });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(shown.map((r) => r.query), ['add']);
});

test('emptying the box shows every tool at once and drops the answer in flight', async () => {
  const timers = fakeTimers();
  const d = deferred();
  const shown = [];
  const s = createToolSearch({ search: () => d.promise, show: (r) => shown.push(r), timers });
  s.set('echo');
  timers.fire();
  s.set('   ');
  assert.equal(timers.pending(), 0);
  d.resolve({ tools: [{ name: 'echo' }], total: 1 });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(shown, [{ query: '', tools: null, total: 0, error: null }]);
});

test('a failed search is shown as its error, with no tools', async () => {
  const timers = fakeTimers();
  const shown = [];
  const boom = new Error('daemon unreachable');
  const s = createToolSearch({ search: async () => { throw boom; }, show: (r) => shown.push(r), timers });
  s.set('add');
  await s.flush();
  assert.deepEqual(shown, [{ query: 'add', tools: [], total: 0, error: boom }]);
});

test('a malformed answer shows no tools rather than failing', async () => {
  const shown = [];
  const s = createToolSearch({ search: async () => ({ tools: 'nope', total: 'many' }), show: (r) => shown.push(r), timers: fakeTimers() });
  s.set('add');
  await s.flush();
  assert.deepEqual(shown, [{ query: 'add', tools: [], total: 0, error: null }]);
});

test('reset drops a waiting query', async () => {
  const timers = fakeTimers();
  const asked = [];
  const s = createToolSearch({ search: async (q) => asked.push(q), show: () => {}, timers });
  s.set('add');
  s.reset();
  assert.equal(timers.pending(), 0);
  await s.flush();
  assert.deepEqual(asked, []);
});
